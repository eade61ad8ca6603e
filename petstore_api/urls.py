"""Base URL checks: scheme, the ``/v1`` suffix, loopback hosts and origins."""

from __future__ import annotations

import ipaddress
import logging
import warnings

import httpx

from .errors import ConfigError, InsecureTransportError

__all__ = ["PetStoreWarning", "check_base_url", "check_key_transport", "is_loopback", "origin", "same_origin"]

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


def check_key_transport(url: httpx.URL, *, allow_insecure_http: bool) -> None:
    """Refuse a key over plain http to a host that is not loopback, unless allowed."""
    if url.scheme == "http" and not allow_insecure_http and not is_loopback(url.host):
        raise InsecureTransportError(
            f"refusing to send the API key over plain http to {url.host}; use https://, or allow it with "
            "http.allow_insecure_http = true in the config file (or PETSTORE_HTTP__ALLOW_INSECURE_HTTP=1)"
        )


def check_base_url(base_url: str | httpx.URL, *, has_key: bool, allow_insecure_http: bool) -> httpx.URL:
    """Parse and vet the base URL; returns it without a trailing slash.

    Raises ConfigError for a URL that cannot work and InsecureTransportError
    when a key would travel over plain http to a non-loopback host. Warns
    (``PetStoreWarning`` and the log) when the path does not end with ``/v1``.
    """
    try:
        url = httpx.URL(str(base_url).strip())
    except (httpx.InvalidURL, TypeError, ValueError):
        raise ConfigError(f"base URL is not a valid URL: {str(base_url)[:200]!r}") from None
    if url.scheme not in _DEFAULT_PORTS or not url.host:
        raise ConfigError(f"base URL must start with https:// or http:// and name a host, got {str(url)[:200]!r}")
    if url.query or url.fragment:
        raise ConfigError(f"base URL must not carry a query or fragment, got {str(url)[:200]!r}")
    url = url.copy_with(path=url.path.rstrip("/") or "/")
    if has_key:
        check_key_transport(url, allow_insecure_http=allow_insecure_http)
    if not url.path.endswith("/v1"):
        message = f"base URL {str(url)!r} does not end with /v1; the Pet Store API lives under /v1"
        warnings.warn(message, PetStoreWarning, stacklevel=3)
        logger.warning(message)
    return url
