"""The composition root: settings -> target -> client (sandbox or remote) -> command session.

This is the only place that knows both the command layer and the embedded
service; ``bot_commands`` never imports ``petstore_server``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot_commands.results import EnvInfo
from bot_commands.session import CommandSession
from petstore_api.client import PetStoreClient, RetryPolicy, Timeouts, asgi_transport
from petstore_api.masking import mask_secret
from petstore_api.settings import Settings, Target, default_data_dir, resolve_target

from .startup import resume_gc

#: Base URL the in-process sandbox is addressed by; nothing leaves the process.
SANDBOX_BASE_URL = "http://sandbox.localhost/v1"

Confirm = Callable[[str], Awaitable[bool]]


@dataclass
class Composition:
    """A ready command session and what must be closed after it."""

    session: CommandSession
    client: PetStoreClient
    target: Target
    _closers: list[Callable[[], Any]] = field(default_factory=list)

    async def aclose(self) -> None:
        await self.client.aclose()
        for close in reversed(self._closers):
            close()


def sandbox_dir(settings: Settings) -> Path:
    return settings.sandbox.data_dir or default_data_dir() / "sandbox"


def compose(
    settings: Settings,
    *,
    sandbox_reset: bool = False,
    confirm: Confirm | None = None,
) -> Composition:
    """Build the session the faces drive. Raises ConfigError on bad settings."""
    target = resolve_target(settings)
    closers: list[Callable[[], Any]] = []
    transport = None
    base_url, api_key = target.base_url, target.api_key
    if target.sandbox:
        from petstore_server.sandbox import Sandbox

        sandbox = Sandbox.open(sandbox_dir(settings), reset=sandbox_reset)
        closers.append(sandbox.close)
        transport = asgi_transport(sandbox.app)
        base_url, api_key = SANDBOX_BASE_URL, sandbox.api_key
    client = PetStoreClient(
        base_url=base_url or "",
        api_key=api_key,
        transport=transport,
        timeouts=Timeouts(
            connect=settings.http.connect_timeout,
            read=settings.http.read_timeout,
            total=settings.http.timeout,
        ),
        retry=RetryPolicy(attempts=settings.http.retries + 1, retry_after_cap=settings.http.retry_after_cap),
        allow_insecure_http=settings.http.allow_insecure_http or target.sandbox,
    )
    env = EnvInfo(
        env=target.env,
        base_url="(in-process sandbox)" if target.sandbox else (base_url or ""),
        masked_key=mask_secret(api_key),
        sandbox=target.sandbox,
        read_only=settings.read_only,
    )
    session = CommandSession(client, env=env, read_only=settings.read_only, confirm=confirm)
    resume_gc()  # start-up ends here for every face (see petstore_cli.startup)
    return Composition(session=session, client=client, target=target, _closers=closers)
