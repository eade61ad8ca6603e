"""The bot's service in tests: the embedded sandbox on a client in-process, as the composition root would give it
(:class:`petstore_bot.assembly.Service`), built without ``petstore_cli`` (tests/bot tests the bot, not the CLI)."""

from __future__ import annotations

import asyncio
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from bot_commands.audit import AuditLog
from bot_commands.commands import default_registry
from bot_commands.pending import PendingWrites
from bot_commands.policy import Actor, Policy
from bot_commands.ports import Notifications
from bot_commands.registry import Registry
from bot_commands.results import EnvInfo
from bot_commands.session import CommandSession
from bot_commands.session_parts import Sleep
from petstore_api.client import PetStoreClient, asgi_transport
from petstore_api.masking import mask_secret
from petstore_bot.settings import BotSettings
from petstore_os.records import replace
from petstore_server.sandbox import Sandbox

SANDBOX_URL = "http://sandbox.localhost/v1"


@dataclass
class SandboxService:
    """One client on a sandbox, and sessions on it; :meth:`aclose` closes the client, the audit and the sandbox."""

    client: PetStoreClient
    env: EnvInfo
    registry: Registry
    policy: Policy
    audit: AuditLog | None
    sandbox: Sandbox
    closed: list[str] = field(default_factory=list)

    def session(
        self,
        *,
        actor: Actor | None = None,
        policy: Policy | None = None,
        confirm_ttl: float = 60.0,
        max_history: int | None = None,
        pending: PendingWrites | None = None,
        approval_ttl: float = 3600.0,
        sleep: Sleep = asyncio.sleep,
        notifications: Notifications | None = None,
    ) -> CommandSession:
        return CommandSession(
            self.client,
            env=self.env,
            registry=self.registry,
            actor=actor,
            policy=policy or self.policy,
            audit=self.audit,
            confirm_ttl=confirm_ttl,
            max_history=max_history,
            pending=pending,
            approval_ttl=approval_ttl,
            sleep=sleep,
            notifications=notifications,
        )

    async def aclose(self) -> None:
        self.closed.append("closed")
        await self.client.aclose()
        if self.audit is not None:
            self.audit.close()
        self.sandbox.close()


def sandbox_service(data_dir: Path, *, audit: Path | None, read_only: bool = False) -> SandboxService:
    """The sandbox in ``data_dir`` (made on first use), its writes audited in ``audit``."""
    sandbox = Sandbox.open(data_dir)
    client = PetStoreClient(
        base_url=SANDBOX_URL, api_key=sandbox.api_key, transport=asgi_transport(sandbox.app), allow_insecure_http=True
    )
    env = EnvInfo(
        env="sandbox",
        base_url="(in-process sandbox)",
        masked_key=mask_secret(sandbox.api_key),
        sandbox=True,
        read_only=read_only,
    )
    return SandboxService(
        client=client,
        env=env,
        registry=default_registry(),
        policy=replace(Policy(), read_only=read_only),
        audit=AuditLog(audit).open() if audit else None,
        sandbox=sandbox,
    )


def bot_settings(path: Path) -> BotSettings:
    """The ``[bot]`` table of the TOML file at ``path``."""
    document = tomllib.loads(path.read_text(encoding="utf-8"))
    return BotSettings.model_validate(document.get("bot", {}))
