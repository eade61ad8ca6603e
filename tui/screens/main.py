"""The main screen: env bar, status tabs, pets pane, chat pane. Wiring only.

It is also the first frame: ``MainScreen(None)`` paints the chrome in its loading
state (the env bar says "loading…", the table is loading, the prompt takes typing) before the
libraries load; :meth:`MainScreen.attach` gives it the session when the app's start-up worker
has built it. So this module imports Textual and light modules only: the command layer's
models, the summaries and the screens it opens are imported where they are used (after the
session exists; :func:`preload` imports them in the start-up worker, off the event loop).

Every action becomes a slash-command line run through :meth:`MainScreen.run_line`
(echoed in the log, recorded in the session's history); its outcome is applied
by small handlers per result type. Decisions live in :mod:`tui.controller`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from functools import cache, partial
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input
from textual.worker import Worker

from .. import controller as c
from ..calls import CallWatch, ClientActivity, waiting_text
from ..widgets.chat_pane import ChatPane
from ..widgets.env_bar import EnvBar
from ..widgets.pets_pane import PetsPane
from ..widgets.status_tabs import StatusTabs

if TYPE_CHECKING:  # pragma: no cover
    from bot_commands.history import PromptHistory
    from bot_commands.outcome import Outcome
    from bot_commands.session import CommandSession, Prepared

    from ..player import Player
    from ..preview import Preview
    from ..validation import FormValues

#: Failures shown in the log only: the user's own typing (the log is where they look).
QUIET_KINDS = frozenset({"usage"})


class MainScreen(Screen[None]):
    AUTO_FOCUS = "#pets-table"
    BINDINGS = [
        # priority: handled as it arrives, so keys typed in the same burst already go to the prompt
        Binding("slash", "focus_prompt", "Prompt", priority=True),
        Binding("a", "add", "Add"),
        Binding("r", "refresh", "Refresh"),
        Binding("o", "orders", "Orders"),
        Binding("ctrl+l", "toggle_log", "Log"),
        Binding("q", "quit", "Quit"),
        Binding("i", "last_call", "Last call", show=False),
        Binding("w", "live", "Live refresh", show=False),
        Binding("1", "tab('all')", "All", show=False),
        Binding("2", "tab('available')", "Available", show=False),
        Binding("3", "tab('pending')", "Pending", show=False),
        Binding("4", "tab('sold')", "Sold", show=False),
    ]

    def __init__(
        self,
        session: CommandSession | None,
        *,
        page_size: int = 20,
        today: Callable[[], date] = date.today,
        history: PromptHistory | None = None,
        refresh_interval: float = 5.0,
    ) -> None:
        """``session`` None: the first frame, loading until :meth:`attach`. ``refresh_interval``: seconds
        between live refreshes (``w``)."""
        super().__init__()
        self.session = session
        self.history = history
        self.fresh = c.Freshness()
        self.page_size = c.clamp_page_size(page_size) if session is not None else page_size
        self.today = today
        self.pending_select: Any = None
        self._error: tuple[str, str] | None = None
        #: Lines submitted at the prompt before the session came: run when it does.
        self._queued: list[str] = []
        #: The session's client tells it of attempts, retries and exchanges (added with the session).
        self.calls = CallWatch(self)
        self.refresh_interval = refresh_interval
        self._live: Timer | None = None

    def compose(self) -> ComposeResult:
        session = self.session
        yield EnvBar(session.env if session is not None else None, id="env-bar")
        yield StatusTabs(id="status-tabs")
        yield PetsPane(page_size=self.page_size, id="pets-pane")
        yield ChatPane(
            complete=session.complete if session is not None else _no_completion, history=self.history, id="chat-pane"
        )

    def on_mount(self) -> None:
        self.call_after_refresh(self._mount_footer)
        if self.session is None:
            self.pane.begin_loading(None)
        else:
            self._begin()

    async def _mount_footer(self) -> None:
        """The keys footer, right after the first frame: the frame shows the bar, the tabs, the table and
        the prompt; the footer's keys (nine widgets, and the Footer's styles to parse) come a frame later."""
        from ..widgets.footer import KeysFooter

        if self.is_attached:  # not an app already gone (a script that ended at once)
            await self.mount(KeysFooter())
            self.refresh_bindings()  # the footer shows the keys when told they changed

    async def attach(self, session: CommandSession, *, page_size: int) -> None:
        """The session, built behind the first frame: the env bar, completion, the first list."""
        self.session = session
        self.page_size = self.pane.page_size = c.clamp_page_size(page_size)
        self.chat.use_completion(session.complete)
        await self.query_one(EnvBar).load(session.env)
        self._begin()
        queued, self._queued = self._queued, []
        for line in queued:
            self.submit(line)

    async def show_preview(self, preview: Preview) -> None:
        """The first page fetched while the session loads (the session's first list replaces it),
        with the environment it came from; dropped when the session came first or a tab was chosen."""
        if self.session is not None or preview.status != self.tabs.status:
            return
        await self.query_one(EnvBar).load(preview.env)
        self.pane.show_preview(preview.rows)

    def _begin(self) -> None:
        self.live.client.add_event_hook(self.calls)
        self.load(self.tabs.status)
        player = getattr(self.app, "player", None)
        if player is not None:
            self.run_worker(self.play(player), group="play", exit_on_error=False)

    @property
    def live(self) -> CommandSession:
        """The session (what needs it is disabled or queued until :meth:`attach`)."""
        assert self.session is not None, "the session is not attached yet"
        return self.session

    async def play(self, player: Player) -> None:
        """Play a script, then report (and exit, when asked)."""
        report = await player.play(self)
        if player.exit_after:
            self.app.exit(return_code=report.exit_code)
        elif report.failed is not None:
            self.say(report.message, title="Script stopped", severity="error", timeout=30)
        else:
            self.notify(f"{report.ran} commands played.", title="Script finished")

    async def close_overlays(self) -> None:
        """Close screens opened over this one (as a person would before typing)."""
        while len(self.app.screen_stack) > 1 and self.app.screen is not self:
            await self.app.pop_screen()

    @property
    def pane(self) -> PetsPane:
        return self.query_one(PetsPane)

    @property
    def chat(self) -> ChatPane:
        return self.query_one(ChatPane)

    @property
    def tabs(self) -> StatusTabs:
        return self.query_one(StatusTabs)

    def say(self, text: str, **options: Any) -> None:
        """A notification whose text may come from the service: shown literally, never as markup."""
        from bot_commands.sanitize import visible

        self.notify(visible(text), markup=False, **options)

    # ------------------------------------------------------------------ running lines

    def submit(self, line: str) -> Worker[Outcome]:
        """Run a line in a worker (lists and details cancel their older selves)."""
        prepared = self.live.prepare(line)
        group, exclusive = c.worker_group(prepared.command.group if prepared.command else None)
        return self.run_worker(partial(self.run_line, prepared), group=group, exclusive=exclusive, exit_on_error=False)

    async def run_line(self, line: str | Prepared) -> Outcome:
        """Echo, run and apply one line; never raises."""
        prepared = self.live.prepare(line) if isinstance(line, str) else line
        self.chat.echo(prepared.line)
        command = prepared.command
        if command is not None and command.group == "listing":
            self.pane.begin_loading(self.pane.status, more=command.name == "more")
        outcome = await self.live.run(prepared)
        self.pane.end_waiting()
        try:
            self.apply(outcome)
        except Exception as exc:  # noqa: BLE001 - a display bug must not end the app
            self.say(f"Could not show the result: {exc}", severity="error")
        return outcome

    def load(self, status: str | None) -> None:
        self.pane.begin_loading(status)
        self.submit(c.list_line(status, self.pane.page_size))

    # ------------------------------------------------------------------ applying outcomes

    def apply(self, outcome: Outcome) -> None:
        from ..summaries import failure_text, summarize

        if outcome.failure is not None:
            self.chat.write(failure_text(outcome.failure))
            self.apply_failure(outcome)
            return
        result = outcome.result
        assert result is not None
        self.chat.write(summarize(result))
        handler = _handlers().get(type(result))
        if handler is not None:
            handler(self, outcome)

    def _show_list(self, outcome: Outcome) -> None:
        from bot_commands import results as r

        result = outcome.result
        assert isinstance(result, r.PetList)
        if not self.fresh.accept("list", outcome.seq):
            return
        pane = self.pane
        pane.page_size = result.limit or pane.page_size
        pane.show_page(result.pets, status=result.status, next_url=result.next_url, append=result.continued)
        self.tabs.show_status(result.status)
        if self.pending_select is not None:
            pet, self.pending_select = self.pending_select, None
            self._select_new(pet)

    def _show_created(self, outcome: Outcome) -> None:
        from bot_commands import results as r

        assert isinstance(outcome.result, r.PetCreated)
        pet = outcome.result.pet
        tab = c.tab_for_new_pet(pet.status_text, self.tabs.status)
        if tab is None:
            self._select_new(pet)
        else:  # selected once that tab's list has come
            self.pending_select = pet
            self.tabs.active = tab

    def _select_new(self, pet: Any) -> None:
        if self.pane.add_pet(pet):
            self.pane.select_pet(pet.id)

    def _show_detail(self, outcome: Outcome) -> None:
        from bot_commands import results as r

        from .detail import DetailScreen

        assert isinstance(outcome.result, r.PetDetail)
        if self.fresh.accept("detail", outcome.seq):
            self.app.push_screen(DetailScreen(c.detail_from_result(outcome.result)))

    def _show_orders(self, outcome: Outcome) -> None:
        from bot_commands import results as r

        from .orders import OrdersScreen

        assert isinstance(outcome.result, r.OrdersListing)
        self.app.push_screen(OrdersScreen(outcome.result))

    def _quit(self, outcome: Outcome) -> None:
        self.app.exit(return_code=0)

    def _deliver_script(self, outcome: Outcome) -> None:
        """``/history save`` in a session that may not touch the host's files: the script goes to the person's
        browser as a download (Textual's delivery through the web driver), never to a file here."""
        import io

        from bot_commands import results as r

        result = outcome.result
        assert isinstance(result, r.HistoryScript)
        if not self.app.is_web:  # at a terminal Textual would save it in the Downloads dir: a host file after all
            self.say("Not saved: this session may not write files on this machine.", severity="warning")
            return
        self.app.deliver_text(
            io.StringIO(result.text),
            save_filename=result.name,
            open_method="download",
            mime_type="text/plain",
            name="history",
        )

    def apply_failure(self, outcome: Outcome) -> None:
        from ..summaries import failure_message

        failure = outcome.failure
        assert failure is not None
        state = c.list_failure_state(outcome)
        if state == "problem":
            self.pane.show_problem(failure, hint="  Press r to retry.")
        elif state == "idle":
            self.pane.stop_loading()
        if failure.kind == "auth":
            self.ask_for_key(outcome)
        if outcome.name == "get" and self._show_failed_detail(outcome):
            return  # fell back to the list's data: nothing is wrong for the user
        if failure.kind not in QUIET_KINDS:
            self.error_toast(failure_message(failure), title=failure.title)

    def error_toast(self, message: str, *, title: str) -> None:
        """One error toast at a time: the newest replaces the one shown (errors in a burst make one)."""
        if self._error is None:
            self.app.call_later(self._show_error)
        self._error = (message, title)

    def _show_error(self) -> None:
        if self._error is not None:
            (message, title), self._error = self._error, None
            self.app.clear_notifications()
            self.say(message, title=title, severity="error")

    def _show_failed_detail(self, outcome: Outcome) -> bool:
        """Show the detail a failed /get still allows; True when it fell back to the list."""
        from .detail import DetailScreen

        failure = outcome.failure
        assert failure is not None
        pet_id = c.get_target(outcome)
        known = self.pane.pets.get(pet_id) if pet_id is not None else None
        view = c.detail_for_failure(failure, pet_id=pet_id, known=known)
        if view is not None:
            self.app.push_screen(DetailScreen(view))
        return view is not None and bool(view.fallback)

    def ask_for_key(self, outcome: Outcome) -> None:
        from ..summaries import failure_message
        from .api_key import ApiKeyScreen

        session = self.live

        def use_key(key: str | None) -> None:
            from bot_commands.errors import CommandError

            if not key:
                return
            try:
                session.set_api_key(key)
            except CommandError as exc:
                self.say(str(exc), title="Key not changed", severity="error")
                return
            self.query_one(EnvBar).show(session.env)
            self.chat.write(Text("Using the new key for this session.", style="dim"))
            self.submit(outcome.line)

        if not any(isinstance(screen, ApiKeyScreen) for screen in self.app.screen_stack):
            has_key = session.env.masked_key != "(none)"
            message = failure_message(outcome.failure) if outcome.failure else ""
            self.app.push_screen(ApiKeyScreen(message, has_key=has_key), use_key)

    # ------------------------------------------------------------------ messages from the panes

    def on_unmount(self) -> None:
        if self.session is not None:
            self.session.client.remove_event_hook(self.calls)

    def on_client_activity(self, message: ClientActivity) -> None:
        text = waiting_text(message.event)
        if text is not None:
            self.pane.show_waiting(text)

    def on_status_tabs_changed(self, event: StatusTabs.Changed) -> None:
        if self.session is not None and event.status != self.pane.status:  # else: listed on attach
            self.load(event.status)

    def on_pets_pane_open_detail(self, event: PetsPane.OpenDetail) -> None:
        self.open_detail(event.pet_id)

    def on_pets_pane_load_more(self, event: PetsPane.LoadMore) -> None:
        if self.session is not None:
            self.submit("/more")

    def on_pets_pane_page_size_changed(self, event: PetsPane.PageSizeChanged) -> None:
        if self.session is not None:
            self.load(self.pane.status)

    def on_chat_pane_submitted(self, event: ChatPane.Submitted) -> None:
        self.submit_or_queue(event.line)

    def submit_or_queue(self, line: str) -> None:
        """Run ``line``, or before the session is attached, once it is."""
        if self.session is None:
            self._queued.append(line)
        else:
            self.submit(line)

    def on_chat_pane_leave(self, event: ChatPane.Leave) -> None:
        self.pane.table.focus()

    # ------------------------------------------------------------------ actions

    def open_detail(self, pet_id: int) -> None:
        if self.session is None:  # a previewed row: its detail once the session comes
            self.submit_or_queue(c.get_line(pet_id))
            return
        from .detail import DetailScreen

        view = c.detail_without_request(self.pane.pets.get(pet_id), today=self.today())
        if view is not None:
            self.app.push_screen(DetailScreen(view))
        else:
            self.submit(c.get_line(pet_id))

    def action_focus_prompt(self) -> None:
        """``/`` outside the prompt: the prompt, with ``/`` typed. Focus moves at once (not after the
        keys already queued), so ``/add ...`` typed or pasted in one burst all lands in the prompt."""
        prompt = self.chat.prompt
        if isinstance(self.focused, Input):
            raise SkipAction()  # a "/" typed in the prompt (or the filter) is text
        self.set_focus(prompt)
        if not prompt.value:
            self.chat.type_into("/")

    # While loading (no session yet) the keys stay as they will be (the footer does not change when the
    # session comes): a tab is listed on attach, /orders waits for it, refresh has nothing to do (the
    # first list is on its way), and the form, which needs the session's models, does not open (a bell).

    def action_add(self) -> None:
        if self.session is None:
            self.app.bell()
            return
        from .add_pet import AddPetScreen

        self.app.push_screen(AddPetScreen(submit=self.submit_add))

    async def submit_add(self, values: FormValues) -> Outcome:
        """Run the form's values as ``/add`` (the form shows failures itself)."""
        line = c.add_line(name=values.name, category_id=values.category_id, status=values.status)
        return await self.run_line(line)

    def action_refresh(self) -> None:
        if self.session is not None:
            self.load(self.pane.status)

    def action_orders(self) -> None:
        self.submit_or_queue("/orders")

    def action_live(self) -> None:
        """Live refresh on or off: every ``refresh_interval`` seconds the loaded list is fetched again."""
        from ..live import live_note

        if self.session is None:
            self.app.bell()
            return
        if self._live is None:
            self._live = self.set_interval(self.refresh_interval, self.live_refresh)
            self.pane.show_live(live_note(self.refresh_interval))
        else:
            self._live.stop()
            self._live = None
            self.pane.show_live("")

    def live_refresh(self) -> None:
        """One live refresh, unless a list is on its way (that one brings the news)."""
        if self.session is not None and not self.pane.table.loading:
            self.run_worker(self._relist(), group="live", exclusive=True, exit_on_error=False)

    async def _relist(self) -> None:
        from ..live import live_note, relist

        pane = self.pane
        try:
            pets = await relist(self.live.client, status=pane.status, loaded=len(pane.pets))
        except Exception as exc:  # noqa: BLE001 - the next tick tries again; the info line says why
            from bot_commands.errors import classify

            pane.show_live(f"live: {classify(exc).title.lower()}, trying again")
            return
        finally:
            pane.end_waiting()
        pane.merge(pets)
        pane.show_live(live_note(self.refresh_interval))

    def action_last_call(self) -> None:
        """The last request and response (method, URL, status, headers with the key masked, bodies)."""
        from .last_call import LastCallScreen

        env = self.session.env if self.session is not None else None
        sandbox = env.base_url if env is not None and env.sandbox else None
        self.app.push_screen(LastCallScreen(self.calls.last, sandbox=sandbox))

    def action_tab(self, tab: str) -> None:
        self.tabs.active = tab

    def action_toggle_log(self) -> None:
        """The log takes the pets pane's place, or gives it back."""
        self.toggle_class("-log-max")
        if self.has_class("-log-max") and self.focused is self.pane.table:
            self.chat.log_view.focus()
        self.chat.scroll_log_end()

    def action_quit(self) -> None:
        """``q`` on the main screen (not in the prompt, not in a form) ends the app with 0."""
        self.app.exit(return_code=0)


def _no_completion(line: str) -> tuple[str, ...]:
    return ()


@cache
def _handlers() -> dict[type, Callable[[MainScreen, Outcome], None]]:
    """What each result type does to the screen (the command layer's result types, imported on first use)."""
    from bot_commands import results as r

    return {
        r.PetList: MainScreen._show_list,
        r.PetCreated: MainScreen._show_created,
        r.PetDetail: MainScreen._show_detail,
        r.OrdersListing: MainScreen._show_orders,
        r.Quit: MainScreen._quit,
        r.HistoryScript: MainScreen._deliver_script,
    }


def preload() -> None:
    """Import what the first list needs on first use (the start-up worker calls this, off the event
    loop); the screens it opens are imported when first opened."""
    from bot_commands import results  # noqa: F401

    from .. import render, summaries  # noqa: F401
    from ..widgets import chat_log  # noqa: F401
