"""An Input whose editing keys take effect in the order they were typed.

Textual's Input inserts a printable key as soon as the key reaches it, but leaves its editing keys
(backspace, delete, the arrows, home, end, ...) to bubble up to the app, which runs the binding several
message hops later. In a burst of keys (a fast typist, a paste typed key by key, the keys a browser's
websocket hands over together) a backspace could so land after the characters typed behind it:
``/`` ``backspace`` ``/list`` became ``//lis`` (Textual issue 6605). :class:`TextInput` runs its own
bindings when the key reaches it, as the app would have: the focused widget's bindings come first, and
priority bindings were checked before the key was handed to the widget.
"""

from __future__ import annotations

from functools import cache

from textual import events
from textual.binding import Binding, BindingsMap
from textual.widgets import Input


@cache
def own_bindings(widget_class: type[Input]) -> dict[str, list[Binding]]:
    """The key bindings declared by ``widget_class`` and its bases, a subclass's replacing its bases'
    for the same key (as Textual merges them). An app keymap would not apply here; this app sets none."""
    keys: dict[str, list[Binding]] = {}
    for base in reversed(widget_class.__mro__):
        keys.update(BindingsMap(vars(base).get("BINDINGS", ())).key_to_bindings)
    return keys


class TextInput(Input):
    """Input that runs its own key bindings in order with the characters typed around them."""

    async def on_key(self, event: events.Key) -> None:
        if event.is_printable:
            return  # Input inserts it
        # The key was queued for this widget: its bindings apply even if the focus has moved on since
        # (a tab bound with priority moves it at once, while keys typed before the tab wait here).
        for binding in own_bindings(type(self)).get(event.key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                event.stop()  # not prevent_default: Input's own handler still restarts the cursor's blink
                return
