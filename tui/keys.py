"""The key bindings, gathered from the classes that own them (for the help screen)."""

from __future__ import annotations

from textual.binding import Binding
from textual.dom import DOMNode

from .screens.add_pet import AddPetScreen
from .screens.detail import DetailScreen
from .screens.main import MainScreen
from .widgets.chat_pane import ChatPane, PromptInput
from .widgets.pets_pane import PetsPane

#: Keys handled by Textual widgets themselves, worth telling about.
BUILTIN = [
    ("List", "enter / click", "Open the pet's detail (/get ID)"),
    ("List", "↑ ↓ j k pgup pgdn home end g G", "Move; moving to the end loads more"),
    ("Anywhere", "ctrl+p", "Command palette (the slash commands)"),
    ("Anywhere", "ctrl+q", "Quit"),
    ("Anywhere", "? / f1", "This help"),
]

OWNERS: list[tuple[str, type[DOMNode]]] = [
    ("Main", MainScreen),
    ("List", PetsPane),
    ("Prompt", ChatPane),
    ("Prompt", PromptInput),
    ("Add form", AddPetScreen),
    ("Detail", DetailScreen),
]

DESCRIPTIONS = {
    "page_size(1)": "Bigger pages (1..100)",
    "page_size(-1)": "Smaller pages",
    "leave": "Leave the prompt for the list",
    "history(-1)": "Previous command",
    "history(1)": "Next command",
    "cursor_right": "Accept the completion",
    "focus_prompt": "Focus the prompt",
    "add": "Add a pet (form, then /add)",
    "refresh": "Refresh, or retry (/list)",
    "orders": "Store › Orders (/orders)",
    "toggle_log": "Maximise the log, or give the list its place back",
    "quit": "Quit (exit code 0)",
    "live": "Live refresh on/off: the list fetched again every [tui] refresh_interval s, the cursor kept",
    "filter": "Filter the loaded rows as you type (enter keeps it, esc clears it)",
    "clear_filter": "Clear the kept filter (the footer shows esc while one is kept)",
    "sort('id')": "Sort by id; again: the other way round",
    "sort('name')": "Sort by name; again: the other way round",
    "sort('category')": "Sort by category; again: the other way round",
    "sort('status')": "Sort by status; again: the other way round",
    "copy('id')": "Copy the pet's id (to the terminal's clipboard, OSC 52)",
    "copy('row')": "Copy the pet's row, tab-separated",
    "last_call": "The last call: method, URL, status, headers (key masked), bodies",
    "load_more": "Next page, when the service offers one",
    "find_added": "Go to a pet added after the loaded pages (loads its page)",
    "close": "Close",
    "cancel": "Cancel",
    "submit": "Send the form",
    "next_field": "Next field (keys typed in a burst follow it)",
    "previous_field": "Previous field",
}


def _key(binding: Binding) -> str:
    names = {"slash": "/", "escape": "esc", "question_mark": "?", "plus": "+", "minus": "-"}
    return " / ".join(names.get(k.strip(), k.strip()) for k in binding.key.split(","))


def help_rows() -> list[tuple[str, str, str]]:
    """(where, key, what) for every binding the TUI declares, plus built-in ones.

    The four tab keys are folded into one row."""
    rows, tabs = [], []
    for where, owner in OWNERS:
        for binding in owner.BINDINGS:
            if not isinstance(binding, Binding):
                continue
            if binding.action.startswith("tab("):
                tabs.append(_key(binding))
                continue
            rows.append((where, _key(binding), DESCRIPTIONS.get(binding.action, binding.description)))
    if tabs:
        rows.insert(1, ("Main", " ".join(tabs), "Tabs All / Available / Pending / Sold (/list STATUS)"))
    return rows + BUILTIN
