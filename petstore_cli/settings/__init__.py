"""The application's settings: the root model composing the client's, the faces' and the bots' parts, and how
they are loaded (flags > environment > the TOML config file > defaults).

Its modules are imported by name (``petstore_cli.settings.load``, ``.model``, ``.target``, ``.paths``) so that a
face asking where the data dir is pays for nothing else.
"""
