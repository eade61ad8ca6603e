"""Every exception the Pet Store client raises, documented in one place.

No ``httpx`` exception ever escapes :mod:`petstore_api`; the client maps them
onto this tree. Each exception's ``str()`` is one human line that says what
went wrong (and, where it helps, what to do); none of them ever contains the
API key.

::

    PetStoreError                 base of everything raised by this package
    ├── ConfigError               settings or config file are invalid
    │   └── InsecureTransportError  key would go over plain http to a remote host
    ├── InputError                a request was refused *before* sending
    │                             (limit out of 1..100, unknown status, ...)
    ├── APIError                  the service answered with an error status
    │   ├── BadRequestError       400  body missing fields / invalid values
    │   ├── AuthenticationError   401  API key missing or invalid
    │   ├── NotFoundError         404  no such resource
    │   ├── RateLimitedError      429  too many requests
    │   └── ServerError           5xx  the service failed
    ├── TransportError            no usable HTTP exchange happened
    │   ├── ConnectError          could not connect to the host
    │   └── TimeoutError          the call exceeded its time budget
    └── ProtocolError             the service answered, but not as the spec
                                  promises (HTML page, truncated JSON, wrong shape)

``APIError`` carries the parsed ``Error`` body of the spec as ``.error``
(``code``, ``message``, ``status``). When the service sent no usable Error body,
``.error`` is synthesised from the HTTP status so callers can rely on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .models import ErrorBody

__all__ = [
    "PetStoreError",
    "ConfigError",
    "InsecureTransportError",
    "InputError",
    "APIError",
    "BadRequestError",
    "AuthenticationError",
    "NotFoundError",
    "RateLimitedError",
    "ServerError",
    "TransportError",
    "ConnectError",
    "TimeoutError",
    "ProtocolError",
    "api_error_for",
]


class PetStoreError(Exception):
    """Base class: ``str(exc)`` is a single human-readable line."""

    def __init__(self, message: str) -> None:
        # Keep messages to one line whatever the source text held.
        self.message = " ".join(str(message).split())
        super().__init__(self.message)


class ConfigError(PetStoreError):
    """The configuration (flags, environment, config file) is invalid."""


class InsecureTransportError(ConfigError):
    """Refused to send the API key over plain http to a non-loopback host."""


class InputError(PetStoreError):
    """A request was refused before anything was sent; ``field`` names the input."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class APIError(PetStoreError):
    """The service answered with an error status and (usually) an Error body."""

    def __init__(self, error: ErrorBody, *, method: str = "", url: str = "") -> None:
        self.error = error
        self.status = error.status
        self.code = error.code
        self.method = method
        self.url = url
        super().__init__(f"{error.message} (HTTP {error.status}, {error.code})")


class BadRequestError(APIError):
    """400: the request body is missing required fields or holds invalid values."""


class AuthenticationError(APIError):
    """401: the API key is missing or invalid."""


class NotFoundError(APIError):
    """404: the requested resource cannot be found."""


class RateLimitedError(APIError):
    """429: the service asks us to slow down."""


class ServerError(APIError):
    """5xx: the service failed to handle the request."""


class TransportError(PetStoreError):
    """No usable HTTP exchange with ``host`` happened."""

    def __init__(self, message: str, *, host: str = "") -> None:
        super().__init__(message)
        self.host = host


class ConnectError(TransportError):
    """Could not connect to the host (refused, DNS failure, reset)."""


class TimeoutError(TransportError):
    """The call (retries included) exceeded its time budget."""


class ProtocolError(PetStoreError):
    """The service answered, but the body is not what the spec promises."""


_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    404: NotFoundError,
    429: RateLimitedError,
}


def api_error_for(status: int) -> type[APIError]:
    """The most specific :class:`APIError` subclass for an HTTP status."""
    if status >= 500:
        return ServerError
    return _BY_STATUS.get(status, APIError)
