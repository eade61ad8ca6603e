"""One person, many names: who is who across the faces (``[bot.people]``).

A person reaches petstore under a name per face: ``@alice:example.org`` on Matrix, ``slack:T1/U2`` on Slack,
``local:alice`` at a terminal on this host (the login name of the process's real uid), ``pg:alice`` at a terminal on
PostgreSQL state (the database role it logged in as). Each name is what that face authenticated; none is what a
person typed. ``[bot.people]`` says which names are one person, so that the second person an approval asks for is
another *person*, not another name of the asker::

    [bot.people]
    alice = ["@alice:example.org", "local:alice", "pg:alice"]

A name in no list is a person of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from petstore_os.records import field, record

__all__ = ["People"]


@record
class People:
    """Who each name is (see the module docstring)."""

    #: Name -> the person it belongs to.
    person_of: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, table: Mapping[str, Sequence[str]], /) -> People:
        """From ``[bot.people]`` (person -> names); ValueError in one line when a name is given to two people."""
        owner: dict[str, str] = {}
        for person, names in table.items():
            for name in names:
                other = owner.setdefault(name, person)
                if other != person:
                    raise ValueError(f"{name!r} is listed for both {other!r} and {person!r}: a name is one person's")
        return cls(person_of=owner)

    def person(self, name: str, /) -> str:
        """The person ``name`` belongs to (the name itself when no list holds it)."""
        return self.person_of.get(name, name)

    def same(self, a: str, b: str, /) -> bool:
        """Whether two names are one person."""
        return a == b or self.person(a) == self.person(b)

    def names(self, name: str, /) -> tuple[str, ...]:
        """Every name of the person ``name`` belongs to, ``name`` first (to look up their role in a room)."""
        person = self.person(name)
        return (name, *(other for other, owner in self.person_of.items() if owner == person and other != name))
