"""``petstore web``: the TUI served to browsers (textual-serve's client and app-process protocol, behind a token).

Each browser session runs the real ``petstore tui`` as a process of its own; this package only serves
pages and relays bytes, so it imports no product layer (tests/test_layers.py keeps it so).
"""
