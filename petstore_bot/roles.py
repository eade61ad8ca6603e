"""Who has which role in chat: the ``[bot.roles]`` lists, and ``default_role`` for everyone else."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bot_commands.policy import Role

__all__ = ["RoleBook"]


@dataclass(frozen=True, slots=True)
class RoleBook:
    """Platform user ids (``@alice:example.org``, ``slack:T123/U456``) by role; operators win over viewers."""

    operators: frozenset[str]
    viewers: frozenset[str]
    default: Role = Role.VIEWER

    @classmethod
    def of(cls, *, operators: Iterable[str], viewers: Iterable[str], default: str) -> RoleBook:
        return cls(operators=frozenset(operators), viewers=frozenset(viewers), default=Role(default))

    def role_for(self, user: str) -> Role:
        if user in self.operators:
            return Role.OPERATOR
        if user in self.viewers:
            return Role.VIEWER
        return self.default
