"""The composition root: settings -> target -> client (sandbox or remote) -> sessions.

This is the only place that knows both the command layer and the embedded
service; ``bot_commands`` never imports ``petstore_server``. Building the
client is apart from building a session: a :class:`Composition` holds one
client (and its connection pool) and makes any number of sessions on it, one
per actor (a chat bot makes one per user and room), each with its own state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import SecretStr

from bot_commands.audit import AuditLog
from bot_commands.commands import default_registry
from bot_commands.pending import PendingWrites
from bot_commands.policy import Actor, Policy
from bot_commands.ports import AskApproval, Confirm, Notifications
from bot_commands.registry import Registry
from bot_commands.results import EnvInfo
from bot_commands.session_parts import DEFAULT_CONSENT_HINT, Sleep
from petstore_api.client import PetStoreClient, asgi_transport
from petstore_api.masking import mask_secret
from petstore_cli.settings.model import Settings
from petstore_cli.settings.paths import default_data_dir
from petstore_cli.settings.target import Target, resolve_target
from petstore_os import Warn
from petstore_os.records import replace

if TYPE_CHECKING:  # pragma: no cover
    from bot_commands.session import CommandSession

#: Base URL the in-process sandbox is addressed by; nothing leaves the process.
SANDBOX_BASE_URL = "http://sandbox.localhost/v1"
#: How every face names the sandbox (the env bar, /env, --play screenshots).
SANDBOX_LABEL = "(in-process sandbox)"


@dataclass
class Composition:
    """One client and what a face needs to make sessions on it; close it when done."""

    client: PetStoreClient
    target: Target
    env: EnvInfo
    registry: Registry
    policy: Policy
    audit: AuditLog | None = None
    _closers: list[Callable[[], object]] = field(default_factory=list)

    def session(
        self,
        *,
        actor: Actor | None = None,
        confirm: Confirm | None = None,
        policy: Policy | None = None,
        confirm_ttl: float = 60.0,
        max_history: int | None = None,
        pending: PendingWrites | None = None,
        approval_ttl: float = 3600.0,
        sleep: Sleep = asyncio.sleep,
        notifications: Notifications | None = None,
        ask_approval: AskApproval | None = None,
        progress: Callable[[str], None] | None = None,
        consent_hint: str = DEFAULT_CONSENT_HINT,
    ) -> CommandSession:
        """A new session on the shared client (its own ``$last``, ``/more`` and history), built whole: what each
        part is, :class:`~bot_commands.session_parts.SessionParts` says."""
        from bot_commands.session import CommandSession  # a bot's first at a person's first message

        return CommandSession(
            self.client,
            env=self.env,
            registry=self.registry,
            actor=actor,
            policy=policy or self.policy,
            confirm=confirm,
            audit=self.audit,
            confirm_ttl=confirm_ttl,
            max_history=max_history,
            pending=pending,
            approval_ttl=approval_ttl,
            sleep=sleep,
            notifications=notifications,
            ask_approval=ask_approval,
            progress=progress,
            consent_hint=consent_hint,
        )

    def on_close(self, close: Callable[[], object]) -> None:
        """Call ``close`` when the composition is closed (after the client; the last added first)."""
        self._closers.append(close)

    async def aclose(self) -> None:
        await self.client.aclose()
        if self.audit is not None:
            self.audit.close()
        for close in reversed(self._closers):
            close()


def sandbox_dir(settings: Settings) -> Path:
    return settings.sandbox.data_dir or default_data_dir() / "sandbox"


def compose(
    settings: Settings, *, sandbox_reset: bool = False, policy: Policy | None = None, warn: Warn | None = None
) -> Composition:
    """Build the client faces share. Raises ConfigError on bad settings, CommandError on a bad audit path.

    ``warn`` takes the line said of a file of ours (audit, sandbox) found open to others and tightened; a face
    that owns the terminal collects them to show its way (default: stderr).
    """
    path = settings.audit.path
    audit = AuditLog(path.expanduser(), warn=warn).open() if path else None
    target = resolve_target(settings)
    if target.api_key is None and target.base_url and not target.sandbox:  # last resort: petstore auth login's
        from .settings.keystore import stored_key_for

        stored = stored_key_for(settings, target)
        target = replace(target, api_key=stored.key) if stored else target
    closers: list[Callable[[], object]] = []
    transport = None
    base_url = target.base_url or ""
    api_key: SecretStr | str | None = target.api_key
    if target.sandbox:
        from petstore_server.sandbox import Sandbox

        sandbox = Sandbox.open(sandbox_dir(settings), reset=sandbox_reset, warn=warn)
        closers.append(sandbox.close)
        transport = asgi_transport(sandbox.app)
        base_url, api_key = SANDBOX_BASE_URL, sandbox.api_key
    client = PetStoreClient(
        base_url=base_url,
        api_key=api_key,
        transport=transport,
        timeouts=settings.http.timeouts(),
        retry=settings.http.retry_policy(),
        allow_insecure_http=settings.http.allow_insecure_http or target.sandbox,
    )
    env = EnvInfo(
        env=target.env,
        base_url=SANDBOX_LABEL if target.sandbox else base_url,
        masked_key=mask_secret(api_key),
        sandbox=target.sandbox,
        read_only=settings.read_only,
    )
    rules = replace(policy or Policy(), read_only=settings.read_only, production=target.env == "production")
    return Composition(
        client=client, target=target, env=env, registry=default_registry(), policy=rules, audit=audit, _closers=closers
    )
