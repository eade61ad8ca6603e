"""Data shapes of the Pet Store interface (spec section 2).

What we *send* is validated strictly (``NewPet``); what the service *returns*
is parsed tolerantly (``Pet``): unknown extra fields are kept, and a ``status``
value this client does not know is kept as the plain string it came as.
Required fields with the wrong type are still a protocol error: a pet without
an integer ``id`` is not a pet.
"""

from __future__ import annotations

import enum
from datetime import date, datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, TypeAdapter

from petstore_os.records import field, record

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "NAME_MAX_LENGTH",
    "LIMIT_MIN",
    "LIMIT_MAX",
    "LIMIT_DEFAULT",
    "SUNSET_DATE",
    "PetStatus",
    "NewPet",
    "Pet",
    "ErrorBody",
    "PetPage",
    "DeprecationNotice",
    "PetWithNotice",
    "CreatedPet",
    "parse_pets",
]

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
#: Names are bounded by this project (the spec shows no limit); see docs/spec-gaps.md.
NAME_MAX_LENGTH = 200
LIMIT_MIN, LIMIT_MAX, LIMIT_DEFAULT = 1, 100, 20
#: getPet is removed on this date (spec 4.3 and 9.2).
SUNSET_DATE = date(2030, 12, 5)

Int64 = Annotated[StrictInt, Field(ge=INT64_MIN, le=INT64_MAX)]


class PetStatus(str, enum.Enum):  # noqa: UP042 - StrEnum changes format() of members
    """Availability of an animal; the allowed values, exactly."""

    AVAILABLE = "available"
    PENDING = "pending"
    SOLD = "sold"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def values(cls) -> tuple[str, ...]:
        return tuple(s.value for s in cls)


class NewPet(BaseModel):
    """Request body of ``createPet``; validated strictly before sending."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True)

    name: Annotated[StrictStr, Field(min_length=1, max_length=NAME_MAX_LENGTH)]
    category_id: Int64 = Field(alias="categoryId")
    status: PetStatus | None = None

    def to_wire(self) -> dict[str, Any]:
        """The JSON body: ``categoryId`` on the wire, ``status`` only when set."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class Pet(BaseModel):
    """An animal as the service returned it.

    ``status`` is a :class:`PetStatus` when the value is known, else the
    string as it came. Extra fields are kept (``model_extra``) and
    :meth:`to_wire` gives back the body as it came.
    """

    model_config = ConfigDict(populate_by_name=True, extra="allow", frozen=True)

    id: Int64
    name: StrictStr
    category_id: Int64 = Field(alias="categoryId")
    # left_to_right: a known value becomes PetStatus (smart mode would keep the exact-type str).
    status: Annotated[PetStatus | StrictStr | None, Field(union_mode="left_to_right")] = None

    @property
    def status_text(self) -> str:
        """The status as text ('' when absent), known or not."""
        if self.status is None:
            return ""
        return self.status.value if isinstance(self.status, PetStatus) else self.status

    @property
    def status_known(self) -> bool:
        return self.status is None or isinstance(self.status, PetStatus)

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


_PETS = TypeAdapter(list[Pet])


def parse_pets(data: Any) -> list[Pet]:
    """Parse a ``Pets`` array; raises ``pydantic.ValidationError`` on wrong shape."""
    return _PETS.validate_python(data)


class ErrorBody(BaseModel):
    """The spec's ``Error``: machine code, human message, HTTP status."""

    model_config = ConfigDict(extra="allow", frozen=True)

    code: StrictStr
    message: StrictStr
    status: StrictInt


@record
class PetPage:
    """One page of ``listPets``.

    ``next_url`` is the absolute URL of ``Link: <...>; rel="next"`` when the
    service offered one (None: this is the last page). ``raw`` is the JSON
    array exactly as the service sent it.
    """

    pets: list[Pet]
    next_url: str | None = None
    raw: list[Any] = field(default_factory=list)

    @property
    def has_next(self) -> bool:
        return self.next_url is not None


@record
class DeprecationNotice:
    """A structured notice that an operation is deprecated.

    ``sunset`` is when it is removed (the ``Sunset`` header when sent, else the
    date the spec gives); ``deprecated_since`` comes from the ``Deprecation``
    header (RFC 9745: ``@<unix seconds>``) when sent; ``successor`` is the
    ``Link; rel="successor-version"`` target, if any.
    """

    operation: str
    sunset: datetime | date
    deprecated_since: datetime | None = None
    successor: str | None = None
    from_headers: bool = False

    @property
    def message(self) -> str:
        when = self.sunset.strftime("%-d %B %Y")
        return (
            f"{self.operation} is deprecated and will be removed on {when}; "
            "use listPets (GET /pets) with a status filter instead."
        )


@record
class PetWithNotice:
    """Result of ``getPet``: the pet, its raw body and the deprecation notice."""

    pet: Pet
    notice: DeprecationNotice
    raw: dict[str, Any] = field(default_factory=dict)


@record
class CreatedPet:
    """Result of ``createPet``: the pet as stored, and whether the service replayed an earlier answer.

    ``replayed`` is the service's ``Idempotent-Replayed: true`` header: a request under the same Idempotency-Key
    (an earlier delivery of the same chat message, or this call's own first attempt whose answer was lost) already
    created this pet, and this answer created nothing new.
    """

    pet: Pet
    replayed: bool = False
