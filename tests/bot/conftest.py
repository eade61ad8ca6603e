"""The bot core over the real sandbox service, in-process, through the in-memory chat backend."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot_commands.outcome import Outcome
from petstore_bot.assembly import BotState, build_core, open_state
from petstore_bot.core import BotCore
from petstore_bot.settings import BotSettings
from petstore_bot.testing import ChatRoom

from .service import SandboxService, bot_settings, sandbox_service

ALICE, OSCAR, BOB, CAROL = "@alice:test", "@oscar:test", "@bob:test", "@carol:test"


@dataclass
class Bot:
    core: BotCore
    room: ChatRoom
    composition: SandboxService
    settings: BotSettings
    audit: Path
    data_dir: Path
    state: BotState

    def audit_lines(self) -> list[str]:
        return self.audit.read_text(encoding="utf-8").splitlines() if self.audit.exists() else []

    async def pet_count(self) -> int:
        total = 0
        async for page in self.composition.client.iter_pages(limit=100):
            total += len(page.pets)
        return total


def config(tmp_path: Path, extra: str = "", *, top: str = "", roles: tuple[list[str], list[str]] | None = None) -> Path:
    operators, viewers = roles or ([ALICE, OSCAR], [BOB])
    rate = "" if "rate_limit" in extra else 'rate_limit = "off"\n'
    path = tmp_path / "config.toml"
    path.write_text(
        f'{top}\n[sandbox]\ndata_dir = "{tmp_path / "sandbox"}"\n'
        f'[bot]\naudit_log = "{tmp_path / "audit.ndjson"}"\n{rate}{extra}\n'
        f"[bot.roles]\noperators = {json.dumps(operators)}\nviewers = {json.dumps(viewers)}\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture
async def make_bot(tmp_path: Path) -> AsyncIterator[Callable[..., Bot]]:
    made: list[tuple[SandboxService, BotState]] = []

    def make(
        extra: str = "",
        *,
        top: str = "",
        roles: tuple[list[str], list[str]] | None = None,
        platform: str = "matrix",
        prefix: str | None = None,
        observe: Callable[[Outcome], None] | None = None,
    ) -> Bot:
        """A bot with ``extra`` lines in its [bot] table and ``top`` at the top of the config."""
        settings = bot_settings(config(tmp_path, extra, top=top, roles=roles))
        audit = tmp_path / "audit.ndjson"
        composition = sandbox_service(tmp_path / "sandbox", audit=audit, read_only="read_only = true" in top)
        state = open_state(settings, state_dir=tmp_path / "state", audit=composition.audit)
        made.append((composition, state))
        core = build_core(composition, settings, platform=platform, prefix=prefix, state=state, observe=observe)
        return Bot(
            core=core,
            room=ChatRoom(core.handle),
            composition=composition,
            settings=settings,
            audit=audit,
            state=state,
            data_dir=tmp_path / "sandbox",
        )

    yield make
    for composition, state in made:
        await composition.aclose()
        state.close()


@pytest.fixture
def bot(make_bot: Callable[..., Bot]) -> Bot:
    return make_bot()
