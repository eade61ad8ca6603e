"""Textual's footer, recomposed only when the keys it shows change.

Textual's :class:`~textual.widgets.Footer` removes and mounts all its keys (a dozen widgets,
styles applied to each, a layout and a frame) on every bindings signal of its screen: focus
moving, the app gaining focus, ``refresh_bindings``. At start-up that comes several times in a
row with the same keys, while the start-up worker loads the libraries. This one compares what
it would show with what it shows, and hands the signal on to Textual's footer only on a
difference.

It also keeps the keys a person must always find (help and quit, then the command palette) at its
right edge, in one group (``KeysFooter #essential-keys`` in ``app.tcss``), and shows of the others only
those that fit whole beside it, in order: a narrow terminal drops a key rather than clip its label
(``o O`` for Orders at 60 columns).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import HorizontalGroup
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

Shown = tuple[tuple[str, str, str, bool, str], ...]

#: Actions whose keys stay in view whatever the width (the app's help and quit, or a screen's own quit).
ESSENTIAL = ("help", "app.help", "quit", "app.quit")


class KeysFooter(Footer):
    """A :class:`~textual.widgets.Footer` that skips recomposing to the same keys."""

    def __init__(self) -> None:
        super().__init__()
        self._shown: Shown | None = None

    def compose(self) -> ComposeResult:
        """Textual's keys, the essential ones (and the palette's) moved into a group docked right."""
        keys: list[Widget] = []
        essential: list[Widget] = []
        for widget in super().compose():  # Textual's key widget is not public: known by its action
            rank = _rank(widget)
            (keys if rank is None else essential).append(widget)
        yield from keys
        if essential:
            essential.sort(key=lambda widget: _rank(widget) or 0)
            yield HorizontalGroup(*essential, id="essential-keys")

    async def recompose(self) -> None:
        """Textual's recompose, then the keys fitted to the width once they are laid out."""
        await super().recompose()
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        """Another width: the keys composed again (all of them), then fitted."""
        self.call_after_refresh(self.recompose)

    def _fit(self) -> None:
        """Hide each key (beyond the essential group) from the first one that does not fit whole beside it."""
        if not self.is_attached:
            return
        essential = [child for child in self.children if child.id == "essential-keys"]
        room = self.region.x + self.size.width - sum(group.outer_size.width for group in essential)
        fits = True
        for key in (child for child in self.children if child.id != "essential-keys"):
            fits = fits and key.region.right <= room
            key.display = fits

    def bindings_changed(self, screen: Screen[object]) -> None:
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self.call_after_refresh(self._changed_if_different, screen)

    def shown_keys(self) -> Shown:
        """What the footer shows: each shown binding's key, label, action, state and tooltip."""
        palette = self.app.COMMAND_PALETTE_BINDING if self.show_command_palette else None
        return tuple(
            (binding.key, binding.description, binding.action, enabled, tooltip)
            for key, (_, binding, enabled, tooltip) in self.screen.active_bindings.items()
            if binding.show or key == palette
        )

    def _changed_if_different(self, screen: Screen[object]) -> None:
        if not self.is_attached:
            return
        shown = self.shown_keys()
        if shown != self._shown:
            self._shown = shown
            super().bindings_changed(screen)  # Textual's footer: recomposed with the keys


def _rank(widget: Widget) -> int | None:
    """Where a key goes in the essential group (help, quit, the palette), None when it is not essential."""
    if widget.has_class("-command-palette"):
        return len(ESSENTIAL)
    action = getattr(widget, "action", None)
    return ESSENTIAL.index(action) if action in ESSENTIAL else None
