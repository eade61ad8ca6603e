"""Base URL checks: scheme, the ``/v1`` suffix, loopback hosts and origins."""

from __future__ import annotations

import ipaddress
import logging
import warnings
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from .errors import ConfigError, InsecureTransportError

if TYPE_CHECKING:  # pragma: no cover
    import httpx

__all__ = [
    "PetStoreWarning",
    "check_base_url",
    "check_key_transport",
    "is_loopback",
    "origin",
    "parse_base_url",
    "same_origin",
]

logger = logging.getLogger("petstore_api")

_DEFAULT_PORTS = {"http": 80, "https": 443}


class PetStoreWarning(UserWarning):
    """A configuration that works but is probably not what was meant."""


def is_loopback(host: str) -> bool:
    """True for ``localhost``, 127.0.0.0/8 and ``::1``."""
    host = host.lower().rstrip(".")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def origin(url: httpx.URL) -> tuple[str, str, int | None]:
    """(scheme, host, port) with default ports filled in."""
    scheme = url.scheme.lower()
    return scheme, url.host.lower(), url.port or _DEFAULT_PORTS.get(scheme)


def same_origin(a: httpx.URL, b: httpx.URL) -> bool:
    return origin(a) == origin(b)


def check_key_transport(url: str | httpx.URL, *, allow_insecure_http: bool) -> None:
    """Refuse a key over plain http to a host that is not loopback, unless allowed. ``url`` as text (read by
    ``urllib.parse``, when a client is made) or as httpx read it (when the client connects): the key goes where
    httpx connects, so the check is made on both readings."""
    if isinstance(url, str):
        parts = urlsplit(url)
        scheme, host = parts.scheme.lower(), parts.hostname or ""
    else:
        scheme, host = url.scheme.lower(), url.host
    if scheme == "http" and not allow_insecure_http and not is_loopback(host):
        raise InsecureTransportError(
            f"refusing to send the API key over plain http to {host}; use https://, or allow it with "
            "http.allow_insecure_http = true in the config file (or PETSTORE_HTTP__ALLOW_INSECURE_HTTP=1)"
        )


def _not_a_url(text: str) -> ConfigError:
    return ConfigError(f"base URL is not a valid URL: {text[:200]!r}")


def check_base_url(base_url: str, *, has_key: bool, allow_insecure_http: bool) -> str:
    """Vet the base URL; returns it without a trailing slash (httpx's URL of it: :func:`parse_base_url`).

    Raises ConfigError for a URL that cannot work and InsecureTransportError
    when a key would travel over plain http to a non-loopback host. Warns
    (``PetStoreWarning`` and the log) when the path does not end with ``/v1``.
    Needs no httpx: a client is checked when it is made, and connects at its first call.
    """
    text = str(base_url).strip()
    try:
        parts = urlsplit(text)
        _ = parts.port  # a port that is no number, or out of range
    except ValueError:
        raise _not_a_url(text) from None
    if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.hostname:
        raise ConfigError(f"base URL must start with https:// or http:// and name a host, got {text[:200]!r}")
    if parts.query or parts.fragment:
        raise ConfigError(f"base URL must not carry a query or fragment, got {text[:200]!r}")
    url = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") or "/", "", ""))
    if has_key:
        check_key_transport(url, allow_insecure_http=allow_insecure_http)
    if not url.endswith("/v1"):
        message = f"base URL {url!r} does not end with /v1; the Pet Store API lives under /v1"
        warnings.warn(message, PetStoreWarning, stacklevel=3)
        logger.warning(message)
    return url


def parse_base_url(checked: str) -> httpx.URL:
    """A base URL :func:`check_base_url` passed, as httpx's URL (ConfigError if httpx cannot read it)."""
    import httpx  # with the client's first call

    try:
        return httpx.URL(checked)
    except (httpx.InvalidURL, TypeError, ValueError):
        raise _not_a_url(checked) from None
