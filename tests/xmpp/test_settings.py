"""``[bot.xmpp]``: what the settings accept, and the password from the environment or a file, never printed."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from petstore_api.errors import ConfigError
from petstore_bot.addressing import Addressing
from petstore_bot.roles import RoleBook
from petstore_bot.settings import BotSettings, XmppSettings
from petstore_bot.transport import Wiring, factory_of


def wiring(tmp_path: Path, **xmpp: object) -> Wiring:
    return Wiring(
        bot=BotSettings(xmpp=XmppSettings.model_validate(xmpp)),
        state_dir=tmp_path,
        config_where="test.toml",
        addressing=lambda names: Addressing(prefix="!", names=tuple(names)).line,
        accept_invite=lambda _inviter, _direct, _room: True,
        roles=RoleBook.of(operators=[], viewers=[], default="viewer"),
    )


def test_clear_text_is_only_for_a_server_on_this_machine() -> None:
    with pytest.raises(ValidationError, match="only for a server on this machine"):
        XmppSettings(jid="petbot@example.org", tls="off")
    assert XmppSettings(jid="petbot@example.org", server="127.0.0.1", tls="off").tls == "off"
    assert XmppSettings(jid="petbot@localhost", tls="off").tls == "off"


@pytest.mark.parametrize("jid", ["petbot", "petbot@example.org/laptop", "a b@example.org"])
def test_the_jid_is_a_bare_jid(jid: str) -> None:
    with pytest.raises(ValidationError, match="bare JID"):
        XmppSettings(jid=jid)


def test_the_password_comes_from_a_private_file_and_is_never_shown(tmp_path: Path) -> None:
    secret = tmp_path / "xmpp-password"
    secret.write_text("s3cret-pw\n", encoding="utf-8")
    secret.chmod(0o644)
    made = factory_of("xmpp")(
        wiring(tmp_path, jid="petbot@example.org", password_file=str(secret), rooms=["ops@conference.example.org"])
    )
    assert secret.stat().st_mode & 0o077 == 0  # tightened to 0600
    assert "s3cret-pw" not in repr(made)
    assert made.names == ("petbot", "petbot@example.org")
    assert made.owns("xmpp:ops@conference.example.org") and not made.owns("!room:example.org")
    assert "s3cret-pw" not in repr(XmppSettings(jid="petbot@example.org", password="s3cret-pw"))


def test_a_missing_password_or_two_of_them_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="PETSTORE_BOT__XMPP__PASSWORD"):
        factory_of("xmpp")(wiring(tmp_path, jid="petbot@example.org"))
    (tmp_path / "pw").write_text("x\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="keep one"):
        factory_of("xmpp")(wiring(tmp_path, jid="petbot@example.org", password="y", password_file=str(tmp_path / "pw")))
