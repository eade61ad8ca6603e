"""Every face's ``--port`` is one type (petstore_os.arguments.port_number): 0 to 65535, anything else one line, exit 2,
before anything listens (``serve --port 99999`` once served on 34463, ``web --port 70000`` ended in a traceback)."""

from __future__ import annotations

import pytest

from petstore_cli.main import main
from petstore_cli.options import parse

FACES_WITH_A_PORT = [["serve"], ["web"], ["bot", "slack"]]


@pytest.mark.parametrize("face", FACES_WITH_A_PORT)
@pytest.mark.parametrize("bad", ["99999", "70000", "65536", "-1", "http", "8080.5", ""])
def test_a_bad_port_is_one_line_before_anything_starts(
    face: list[str], bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as ended:
        main([*face, "--port", bad])
    out = capsys.readouterr()
    assert (ended.value.code, out.out) == (2, "")
    assert out.err.count("\n") == 1, out.err
    assert f"petstore {' '.join(face)}: argument --port: must be a port number from 1 to 65535" in out.err
    assert f"not {bad!r}" in out.err


@pytest.mark.parametrize("face", FACES_WITH_A_PORT)
@pytest.mark.parametrize("good", [0, 1, 8080, 65535])
def test_every_port_in_range_is_taken_as_typed(face: list[str], good: int) -> None:
    assert parse([*face, "--port", str(good)]).port == good


def test_the_service_on_its_own_takes_the_same_port_type(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("uvicorn")
    from petstore_server.__main__ import main as serve

    with pytest.raises(SystemExit) as ended:
        serve(["--port", "99999"])
    assert ended.value.code == 2
    assert capsys.readouterr().err.startswith("python -m petstore_server: argument --port: must be a port number")
