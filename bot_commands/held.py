"""What a held write's run came to, as a typed record, and the one codec that keeps it in the store.

A write held for ``/confirm`` or ``/approve`` runs in the session of the person who decided it (a bot's); whoever
waits on it reads how it ended from the bots' shared state (``petstore_state.pending``, its ``result`` column):
a terminal that asked for approval prints the result as the command would have, ``petstore approvals show``
shows the record. :class:`HeldResult` is that record; :func:`encode_held` writes it (the session) and
:func:`decode_held` reads it back (the terminal): every result a write can produce has a codec in
:data:`WRITE_RESULTS`.

The stored text is a JSON object that keeps the keys of the earlier form (``command``, ``ok``, ``result``,
``replayed``, ``error``, ``summary``: a terminal of the previous version reads a row written by this one) and adds
``v`` and ``type``. Rows of the earlier forms are still read: the JSON record a bot wrote for a terminal's request
(its ``result`` a created pet, the only write there was), and the one line a bot kept for a chat's. Text that is
neither, or a result of a type this program does not know, decodes to a record with no typed result and the line
it said: never an error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Final

from pydantic import ValidationError

from petstore_api.models import Pet
from petstore_os.records import record

from .errors import Failure
from .results import JSON, PetCreated, Result

__all__ = ["FORM", "WRITE_RESULTS", "HeldError", "HeldResult", "ResultCodec", "decode_held", "encode_held"]

#: The version of the stored form (the earlier form had no ``v``).
FORM: Final = 2


@record
class HeldError:
    """Why a held write's run failed, as the failure was classified (``code``, ``message``, HTTP ``status``)."""

    code: str
    message: str
    status: int = 0

    @classmethod
    def of(cls, failure: Failure) -> HeldError:
        return cls(code=failure.code, message=failure.message, status=failure.status)

    def to_json(self) -> dict[str, JSON]:
        return {"code": self.code, "message": self.message, "status": self.status}


@record(kw_only=True)
class HeldResult:
    """How the run of a held write ended: the ``line`` that ran, whether it worked, the one line chat said of it
    (``summary``), and the typed ``result`` (a write that worked) or the ``error`` (one that failed).

    ``result`` is None for a write that failed, and for a row whose form does not carry one (a chat row of an
    earlier version, or a result type this program does not know): its ``summary`` says what came of it."""

    line: str
    ok: bool
    summary: str
    result: Result | None = None
    error: HeldError | None = None

    def record(self) -> dict[str, JSON]:
        """The record ``petstore approvals show`` shows (and the stored form, without its version and type)."""
        record: dict[str, JSON] = {"command": self.line, "ok": self.ok}
        if self.result is not None:
            record |= _codec_of(self.result).encode(self.result)
        if self.error is not None:
            record["error"] = self.error.to_json()
        record["summary"] = self.summary
        return record


@record
class ResultCodec:
    """How one type of write result is stored: ``encode`` gives the record's keys (``result`` at least: the
    result's JSON, what ``--format json`` prints), ``decode`` takes the record back (ValueError: not this type's)."""

    type: type[Result]
    encode: Callable[[Result], dict[str, JSON]]
    decode: Callable[[dict[str, JSON]], Result]


def _encode_created(result: Result) -> dict[str, JSON]:
    assert isinstance(result, PetCreated)
    return {"result": result.to_json(), "replayed": result.replayed}


def _decode_created(record: dict[str, JSON]) -> Result:
    raw = record.get("result")
    if not isinstance(raw, dict):
        raise ValueError("a created pet's record has no pet")
    try:
        pet = Pet.model_validate(raw)
    except ValidationError as exc:
        raise ValueError(f"a created pet's record holds no pet: {exc.error_count()} problems") from None
    return PetCreated(pet=pet, raw=dict(raw), replayed=record.get("replayed") is True)


#: Every result a write can produce, by its type's name (the stored ``type``); a new write's result type is added
#: here (tests/commands/test_held.py fails until it is).
WRITE_RESULTS: Final[dict[str, ResultCodec]] = {
    codec.type.__name__: codec for codec in (ResultCodec(PetCreated, _encode_created, _decode_created),)
}
#: The type of a stored ``result`` in the earlier form, which named none: the only write there was, /add.
_EARLIER_TYPE = PetCreated.__name__


def _codec_of(result: Result) -> ResultCodec:
    codec = WRITE_RESULTS.get(type(result).__name__)
    if codec is None or codec.type is not type(result):
        raise TypeError(f"no codec for a held write's result of type {type(result).__name__} (held.WRITE_RESULTS)")
    return codec


def encode_held(held: HeldResult) -> str:
    """The text the store keeps of ``held`` (ASCII JSON); TypeError for a result type without a codec."""
    record: dict[str, JSON] = {"v": FORM}
    if held.result is not None:
        record["type"] = type(held.result).__name__
    return json.dumps(record | held.record(), ensure_ascii=True)


def decode_held(text: str, *, ok: bool) -> HeldResult:
    """The record ``text`` (as :func:`encode_held` wrote it, or an earlier form) holds; never raises.

    ``ok``: whether the store says the run worked, for a row whose text does not say (one line of chat)."""
    record = _object(text)
    if record is None:  # the one line a bot kept for a chat's request, or text of no known form
        return HeldResult(line="", ok=ok, summary=text)
    worked = record.get("ok")
    held = HeldResult(
        line=_text(record.get("command")),
        ok=worked if isinstance(worked, bool) else ok,
        summary=_text(record.get("summary")),
        error=_error(record.get("error")),
    )
    result = _result(record)
    if result is None:
        return held
    return HeldResult(line=held.line, ok=held.ok, summary=held.summary, result=result, error=held.error)


def _result(record: dict[str, JSON]) -> Result | None:
    """The typed result ``record`` holds; None when it holds none this program can read."""
    if "result" not in record:
        return None
    name = record.get("type", _EARLIER_TYPE if "v" not in record else None)
    codec = WRITE_RESULTS.get(name) if isinstance(name, str) else None
    if codec is None:
        return None
    try:
        return codec.decode(record)
    except ValueError:
        return None


def _object(text: str) -> dict[str, JSON] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _error(value: JSON) -> HeldError | None:
    if not isinstance(value, dict):
        return None
    status = value.get("status")
    return HeldError(
        code=_text(value.get("code")),
        message=_text(value.get("message")),
        status=status if isinstance(status, int) and not isinstance(status, bool) else 0,
    )


def _text(value: JSON) -> str:
    return value if isinstance(value, str) else ""
