"""The bot's stderr is one format: its own lines and those of the libraries under it (matrix-nio's ``Error
validating response``, which once went raw to stderr through logging's last resort), each once."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator

import pytest

from petstore_bot.logs import configure_bot_logging

LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (?P<logger>[\w.]+) (?P<level>[A-Z]+) (?P<message>.*)$")


@pytest.fixture
def bot_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    levels = {name: logging.getLogger(name).level for name in ("petstore_bot", "petstore_state")}
    yield
    root.handlers[:], root.level = handlers, level
    for name, was in levels.items():
        logging.getLogger(name).setLevel(was)


def test_matrix_nio_and_the_bot_write_in_one_format_once(bot_logging: None, capsys: pytest.CaptureFixture[str]) -> None:
    import nio

    configure_bot_logging(verbose=0)
    configure_bot_logging(verbose=0)  # a second call adds no second handler
    nio.WhoamiResponse.from_dict({})  # a homeserver's reply without user_id: nio warns on its own logger
    logging.getLogger("petstore_bot").info("petstore bot started")
    logging.getLogger("nio.rooms").info("nio's chatter below a warning stays out")
    lines = capsys.readouterr().err.splitlines()
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed), lines
    said = [(m["logger"], m["level"], m["message"]) for m in parsed if m]
    assert said == [
        ("nio.responses", "WARNING", "Error validating response: 'user_id' is a required property"),
        ("petstore_bot", "INFO", "petstore bot started"),
    ]
