"""The version of petstore (the client sends it in its User-Agent)."""

__version__ = "0.1.0"
