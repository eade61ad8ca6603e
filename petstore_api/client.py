"""The async Pet Store client. INTERFACE STUB: to be implemented (see DESIGN.md)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
from pydantic import SecretStr

from .models import NewPet, Pet, PetPage, PetStatus, PetWithNotice


class PetStoreClient:
    """One ``httpx.AsyncClient`` per object; use as ``async with PetStoreClient(...) as c``."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: SecretStr | str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        timeouts: "Timeouts | None" = None,
        retry: "RetryPolicy | None" = None,
        allow_insecure_http: bool = False,
    ) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> "PetStoreClient": ...
    async def __aexit__(self, *exc: object) -> None: ...
    async def aclose(self) -> None: ...

    async def list_pets(self, *, limit: int | None = None, status: PetStatus | str | None = None) -> PetPage: ...
    async def next_page(self, page: PetPage) -> PetPage | None: ...
    def iter_pages(self, *, limit: int | None = None, status: PetStatus | str | None = None) -> AsyncIterator[PetPage]: ...
    async def create_pet(
        self, pet: NewPet | None = None, *, name: str | None = None, category_id: int | None = None,
        status: PetStatus | str | None = None, idempotency_key: str | None = None,
    ) -> Pet: ...
    async def get_pet(self, pet_id: int) -> PetWithNotice: ...
    async def list_orders(self) -> Any: ...
