"""WHOIS answers matched to their questions (petstore_bot/irc_whois.py): a late answer never names a later sender.

The server's side is the order RFC 1459 gives and ngIRCd keeps (tests/ircd run the transport on it): one
connection's WHOIS answers in the order asked, each ended by 318, after a 401 too. A late answer cannot be made on
demand by a real server, so these feed the lines in the order such a server sends them."""

from __future__ import annotations

import asyncio
import itertools

from petstore_bot.irc_whois import Whois


def whois(*, wait: float = 30.0) -> tuple[Whois, list[str]]:
    sent: list[str] = []
    ticks = itertools.count(1)
    return Whois(send=sent.append, clock=lambda: float(next(ticks)), wait=wait), sent


async def test_an_answer_arriving_after_its_asker_gave_up_is_not_taken_for_the_next_question() -> None:
    gave_up, sent = whois(wait=0)
    assert await gave_up.account("alice", nick="Alice", since=0.0) is None  # no answer in time
    later = asyncio.ensure_future(gave_up.account("alice", nick="Alice", since=5.0))
    await asyncio.sleep(0)
    assert sent == ["Alice", "Alice"]  # a question of its own, not the one given up on
    gave_up.logged_in("alice", "alice-before")  # the first question's answer, late
    gave_up.ended("alice")
    assert not later.done()
    gave_up.ended("alice")  # the second question's answer: not logged in
    assert await later is None
    assert len(gave_up) == 0


async def test_the_second_answer_goes_to_the_second_question() -> None:
    asked, sent = whois()
    first = asyncio.ensure_future(asked.account("bob", nick="bob", since=0.0))
    await asyncio.sleep(0)
    second = asyncio.ensure_future(asked.account("bob", nick="bob", since=10.0))  # came after the first was sent
    await asyncio.sleep(0)
    assert sent == ["bob", "bob"]
    asked.logged_in("bob", "bob-one")
    asked.ended("bob")
    asked.ended("bob")
    assert (await first, await second) == ("bob-one", None)


async def test_messages_that_came_before_the_question_share_its_answer() -> None:
    asked, sent = whois()
    one = asyncio.ensure_future(asked.account("carol", nick="Carol", since=0.0))
    await asyncio.sleep(0)
    two = asyncio.ensure_future(asked.account("carol", nick="Carol", since=0.5))  # before the question (tick 1)
    await asyncio.sleep(0)
    assert sent == ["Carol"]
    asked.logged_in("carol", "carol")
    asked.ended("carol")
    assert (await one, await two) == ("carol", "carol")


async def test_no_such_nick_then_the_end_is_no_account_and_other_nicks_are_apart() -> None:
    asked, sent = whois()
    gone = asyncio.ensure_future(asked.account("dave", nick="dave", since=0.0))
    here = asyncio.ensure_future(asked.account("erin", nick="erin", since=0.0))
    await asyncio.sleep(0)
    asked.logged_in("erin", "erin-account")
    asked.ended("dave")  # a 401 for dave came first: nothing logged in
    asked.ended("erin")
    assert (await gone, await here) == (None, "erin-account")


async def test_lines_about_a_question_this_connection_did_not_ask_change_nothing() -> None:
    asked, sent = whois()
    asked.logged_in("frank", "someone")
    asked.ended("frank")
    waiting = asyncio.ensure_future(asked.account("frank", nick="frank", since=0.0))
    await asyncio.sleep(0)
    asked.ended("frank")
    assert await waiting is None  # not the unasked line's "someone"
    assert sent == ["frank"]
