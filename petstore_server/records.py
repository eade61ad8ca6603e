"""What every store speaks: the records a store hands the app, and its refusals."""

from __future__ import annotations

from dataclasses import dataclass

from .wire import dumps_str

__all__ = [
    "IDEMPOTENCY_TTL_SECONDS",
    "MIN_ID",
    "SAMPLE_PETS",
    "Created",
    "Idempotency",
    "IdempotencyConflict",
    "Page",
    "PetRecord",
    "SchemaTooNew",
    "StoreOpenError",
    "StoreUnavailable",
    "pet_json",
    "wire_pet",
]

#: How long an Idempotency-Key is remembered.
IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60
#: Smallest int64: the ``after_id`` of the first page.
MIN_ID = -(2**63)

#: Sample pets seeded into a new sandbox: (id, name, categoryId, status).
SAMPLE_PETS: tuple[tuple[int, str, int, str], ...] = (
    (1, "Rex", 1, "available"),
    (2, "Whiskers", 2, "available"),
    (3, "Tweety", 3, "pending"),
    (4, "Goldie", 4, "sold"),
    (5, "Buddy", 1, "pending"),
    (6, "Luna", 2, "sold"),
    (7, "Polly", 3, "available"),
    (8, "Nemo", 4, "available"),
    (9, "Max", 1, "sold"),
    (10, "Cleo", 2, "pending"),
    (11, "Kiwi", 3, "sold"),
    (12, "Bubbles", 4, "available"),
)


class IdempotencyConflict(Exception):
    """The Idempotency-Key was already used with a different request body."""


class StoreOpenError(Exception):
    """The database cannot be opened: one line saying why, without the password of its URL."""


class StoreUnavailable(Exception):
    """The database does not answer now (down, restarting, its file gone): the request may be tried again later.

    The message says what failed, in one line without secrets; the app answers 503 with ``Retry-After``.
    """


class SchemaTooNew(RuntimeError):
    """The database was written by a newer petstore (its schema version is unknown here)."""


@dataclass(frozen=True, slots=True)
class Page:
    """One page of pets: the JSON array, and the id the next page starts after (None: last page)."""

    body: bytes
    next_after: int | None


@dataclass(frozen=True, slots=True)
class Created:
    """Outcome of a create: the 201 body, and whether it was replayed for a repeated key."""

    status_code: int
    body: bytes
    replayed: bool


@dataclass(frozen=True, slots=True)
class Idempotency:
    """An Idempotency-Key, the fingerprint of the request body it came with, and whose key it is.

    ``scope`` identifies the API key that sent it (a digest, never the key: see ``app.key_scope``): the same
    Idempotency-Key from two API keys names two records, and neither key learns of the other's.
    """

    key: str
    fingerprint: str
    scope: str


@dataclass(frozen=True, slots=True)
class PetRecord:
    """A stored pet; ``wire()`` is its JSON shape (``categoryId``; ``status`` only when set)."""

    id: int
    name: str
    category_id: int
    status: str | None

    def wire(self) -> dict[str, int | str]:
        return wire_pet(self.id, self.name, self.category_id, self.status)

    def json(self) -> bytes:
        return pet_json(self.id, self.name, self.category_id, self.status).encode()


def wire_pet(pet_id: int, name: str, category_id: int, status: str | None) -> dict[str, int | str]:
    """A pet's JSON shape (``categoryId``; ``status`` only when set)."""
    pet: dict[str, int | str] = {"id": pet_id, "name": name, "categoryId": category_id}
    if status is not None:
        pet["status"] = status
    return pet


def pet_json(pet_id: int, name: str, category_id: int, status: str | None) -> str:
    """:func:`wire_pet` as compact JSON text, written without making the dict (a page renders one a pet)."""
    head = f'{{"id":{pet_id:d},"name":{dumps_str(name)},"categoryId":{category_id:d}'
    return head + "}" if status is None else f'{head},"status":{dumps_str(status)}}}'
