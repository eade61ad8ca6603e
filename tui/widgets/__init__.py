"""Panes and bars of the TUI, one module each."""
