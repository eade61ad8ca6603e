"""``petstore web`` in a real browser: Debian's Chromium, headless, driven by Playwright for Python.

Chromium missing or not starting: the tests fail when CI=true, and skip with the reason elsewhere.
The terminal is read from xterm.js's own buffer (web_support.XTERM_HOOK), i.e. what the page paints.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from real_parts import unavailable
from web_support import PEOPLE, READ_SCREEN, SHOWS, XTERM_HOOK, Served, audit_lines, web_server

pytestmark = pytest.mark.slow
CHROMIUM = "/usr/bin/chromium"


def _unavailable(reason: str) -> None:
    unavailable(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[test]')")
    if not Path(CHROMIUM).exists():
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        except Error as exc:
            _unavailable(f"Chromium does not start: {str(exc).splitlines()[0]}")
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with web_server(tmp_path_factory.mktemp("web")) as server:
        yield server


def logged_in(browser: Any, served: Served, name: str) -> Any:
    """A browser of its own (cookies apart) where ``name`` typed their token into the login form; the prompt
    focused, ready for a command."""
    context = browser.new_context(viewport={"width": 1280, "height": 760}, accept_downloads=True)
    page = context.new_page()
    page.add_init_script(XTERM_HOOK)
    page.goto(served.base + "/")
    page.fill("#token", PEOPLE[name][1])
    page.click("button[type=submit]")
    page.wait_for_url(served.base + "/", timeout=30_000)
    wait_for(page, "› /list --limit 20")
    page.keyboard.press("/")
    wait_for(page, "esc To list")  # the prompt has the focus, its line begins with "/"
    page.keyboard.press("Backspace")
    return page


def run(page: Any, line: str, *needles: str) -> None:
    page.keyboard.type(line)
    page.keyboard.press("Enter")
    wait_for(page, *needles)


def wait_for(page: Any, *needles: str) -> None:
    try:
        page.wait_for_function(SHOWS, arg=list(needles), timeout=30_000)
    except Exception as exc:
        raise AssertionError(f"{needles!r} not on screen:\n{page.evaluate(READ_SCREEN)}") from exc


def test_the_tui_in_the_browser(browser: Any, served: Served, tmp_path: Path) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 760})
    page.add_init_script(XTERM_HOOK)
    page.goto(served.url)  # the login page posts the token after '#' at once: the app, and no token in the address
    page.wait_for_url(served.base + "/", timeout=30_000)
    wait_for(page, "Goldie", "Luna", "12 pets", "› /list --limit 20")  # the session's own list, not the preview
    focused = "document.activeElement && document.activeElement.classList.contains('xterm-helper-textarea')"
    page.wait_for_function(focused, timeout=30_000)  # the keyboard goes to the terminal without a click
    page.keyboard.press("3")
    wait_for(page, "Tweety", "Cleo", "3 pets with status pending")
    page.keyboard.press("/")
    wait_for(page, "esc To list")
    page.keyboard.type("add Web --category 2")
    page.keyboard.press("Enter")
    wait_for(page, "Created #13 Web", "13 pets shown")  # the new pet, in the table too
    # docs/images/petstore-web.png is this picture, made smaller: convert -strip +dither -colors 128 PNG8
    shot = tmp_path / "petstore-web.png"
    page.screenshot(path=str(shot))
    print(f"screenshot: {shot}")
    page.close()


def test_the_login_form_then_whoami(browser: Any, served: Served, tmp_path: Path) -> None:
    """Without the token in the address: the form, a wrong token refused, the right one typed in, the owner."""
    page = browser.new_page(viewport={"width": 1280, "height": 760})
    page.add_init_script(XTERM_HOOK)
    response = page.goto(served.base + "/")
    assert response is not None and response.status == 401
    assert page.inner_text("h1") == "petstore web" and page.get_attribute("#token", "type") == "password"
    page.fill("#token", served.token[:-1] + "x")
    page.click("button[type=submit]")
    assert "That token is not known here" in page.inner_text("main")
    page.screenshot(path=str(tmp_path / "login.png"))
    page.fill("#token", served.token)
    page.click("button[type=submit]")
    page.wait_for_url(served.base + "/", timeout=30_000)
    wait_for(page, "Goldie")
    page.keyboard.press("/")
    wait_for(page, "esc To list")  # the prompt has the focus
    page.keyboard.type("whoami")
    page.keyboard.press("Enter")
    wait_for(page, "web:owner", "operator")  # the single token's person: the owner, an operator
    page.close()


def test_two_people_two_actors_in_the_audit(browser: Any, people: Served, people_home: Path) -> None:
    alice, bob = logged_in(browser, people, "alice"), logged_in(browser, people, "bob")
    run(alice, "/whoami", "web:alice", "operator")
    run(bob, "/whoami", "web:bob", "viewer")
    run(alice, "/add FromAlice --category 2", "Created #")
    run(bob, "/add FromBob --category 2", "/add needs the operator role; you have viewer")
    lines = [(line["actor"], line["role"], line["outcome"], line["line"]) for line in audit_lines(people_home)]
    assert ("web:alice", "operator", "ok", "/add FromAlice --category 2") in lines
    assert ("web:bob", "viewer", "refused", "/add FromBob --category 2") in lines
    for page in (alice, bob):
        page.context.close()


def test_history_save_in_the_browser_is_a_download_and_no_file_here(
    browser: Any, people: Served, people_home: Path, tmp_path: Path
) -> None:
    planted = people_home / "planted.sh"
    page = logged_in(browser, people, "alice")
    run(page, "/list sold --limit 2", "2 pets with status sold")
    page.keyboard.type(f"/history save {planted}")
    with page.expect_download(timeout=30_000) as delivery:
        page.keyboard.press("Enter")
    download = delivery.value
    assert download.suggested_filename == "planted.sh"
    saved = tmp_path / "planted.sh"
    download.save_as(saved)
    assert saved.read_text().splitlines()[1:] == ["/list --limit 20", "/list sold --limit 2"]
    wait_for(page, "offered as the file planted.sh")
    assert not planted.exists()  # nothing on the server
    assert not (people_home / "data" / "petstore" / "history").exists()
    page.context.close()
