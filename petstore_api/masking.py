"""Masking of secrets for display: at most a short prefix and the last four characters."""

from __future__ import annotations

from pydantic import SecretStr


def mask_secret(secret: SecretStr | str | None) -> str:
    """``sk-live-abcdef1234`` -> ``sk-...1234``; short or missing keys reveal nothing."""
    if secret is None:
        return "(none)"
    value = secret.get_secret_value() if isinstance(secret, SecretStr) else str(secret)
    if not value:
        return "(none)"
    if len(value) < 12:
        return "****"
    prefix = value[:3] if value[:3].isalnum() or "-" in value[:3] else ""
    return f"{prefix}...{value[-4:]}"
