"""Async client for the Pet Store API (spec: docs/spec/petstore-api.txt).

Attributes are imported lazily so that ``import petstore_api`` (for the
version, say) costs nothing; ``from petstore_api import PetStoreClient``
works as usual.
"""

from __future__ import annotations

from .version import __version__

#: typing's own flag without importing typing (``petstore --version`` imports this package and nothing more);
#: type checkers take any name ``TYPE_CHECKING`` as true.
TYPE_CHECKING = False

_LAZY = {
    "PetStoreClient": "client",
    "Timeouts": "client",
    "RetryPolicy": "client",
    "mask_secret": "masking",
    "PetStatus": "models",
    "NewPet": "models",
    "Pet": "models",
    "PetPage": "models",
    "ErrorBody": "models",
    "DeprecationNotice": "models",
    "PetWithNotice": "models",
    "CreatedPet": "models",
}

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .client import PetStoreClient, RetryPolicy, Timeouts
    from .masking import mask_secret
    from .models import CreatedPet, DeprecationNotice, ErrorBody, NewPet, Pet, PetPage, PetStatus, PetWithNotice


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'petstore_api' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = [*sorted(_LAZY), "__version__"]
