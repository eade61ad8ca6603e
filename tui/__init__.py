"""The Textual TUI face of petstore."""
