"""``petstore bot slack --socket-mode``: Slack without a public URL, over slack_sdk's Socket Mode client (aiohttp).

The client asks ``<api_url>apps.connections.open`` with the app-level token (``xapp-...``) for a WebSocket URL,
connects, and hands each envelope to :class:`SocketMode`, which acknowledges it within Slack's 3 seconds:

- ``slash_commands``: the acknowledgement's payload is the answer (or "Working on it", the answer then going to
  response_url), as the HTTP response would be;
- ``interactive`` (Confirm/Cancel): acknowledged at once, the answer to response_url (Slack reads none from a
  button's acknowledgement);
- ``events_api`` (mentions and DMs): acknowledged at once, answered with chat.postMessage; a ``retry_attempt`` of an
  event already taken is not run again.

A ``disconnect`` message (Slack retiring a connection) makes the client open a new one; so does a dropped socket.
The app token is passed to the client only: never logged (slack_sdk redacts it), never on a command line.
"""

from __future__ import annotations

import asyncio
import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient

from .slack import SlackFace
from .slack_forms import BadRequest
from .slack_web import SlackWebError

__all__ = ["SocketMode"]

log = logging.getLogger("petstore_bot.slack")


class _OneLine(logging.Filter):
    """The Socket Mode client's own log lines (reconnects, dropped sockets) without tracebacks: the exception's
    type and message on the line instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            record.msg, record.args = f"{record.getMessage()} ({type(error).__name__})", None
            record.exc_info, record.exc_text = None, None
        return True


_client_log = logging.getLogger("petstore_bot.slack.socket")
_client_log.addFilter(_OneLine())


class SocketMode:
    """Runs ``face`` over Socket Mode until ``stop`` is set (see the module docstring)."""

    def __init__(self, *, face: SlackFace, app_token: str, api_url: str, ping_interval: float = 5.0) -> None:
        self.face = face
        self._app_token, self._api_url, self._ping = app_token, api_url, ping_interval

    def __repr__(self) -> str:
        return f"SocketMode(api_url={self._api_url!r}, app_token=***)"

    async def run(self, stop: asyncio.Event) -> None:
        """Connect, answer envelopes until ``stop``, then close the connection and wait for late answers."""
        client = SocketModeClient(
            app_token=self._app_token,
            web_client=AsyncWebClient(base_url=self._api_url),
            logger=_client_log,
            ping_interval=self._ping,
        )
        client.socket_mode_request_listeners.append(self._on_request)
        try:
            try:  # the first URL asked here, so a refused token is one clear line rather than retries forever
                client.wss_uri = await client.issue_new_wss_url()
            except SlackApiError as exc:
                raise SlackWebError(f"apps.connections.open: Slack answered {exc.response.get('error')!r}") from None
            except Exception as exc:  # noqa: BLE001 -- aiohttp's and the loop's errors, as one line
                raise SlackWebError(
                    f"apps.connections.open: cannot reach {self._api_url}: {type(exc).__name__}"
                ) from None
            await client.connect()  # type: ignore[no-untyped-call]
            log.info("Socket Mode: connected through %sapps.connections.open", self._api_url)
            await stop.wait()
        finally:
            await client.close()  # type: ignore[no-untyped-call]
            await self.face.drain()

    async def _on_request(self, client: AsyncBaseSocketModeClient, request: SocketModeRequest) -> None:
        payload: dict[str, object] | None = None
        try:
            if request.type == "slash_commands":
                payload = await self.face.socket_command(request.payload)
            elif request.type == "interactive":
                self.face.socket_press(request.payload)
            elif request.type == "events_api":
                self.face.take_event(request.payload, retry=request.retry_attempt, reason=request.retry_reason)
            else:
                log.info("Socket Mode: %s envelopes are not handled; acknowledged", request.type)
        except BadRequest as exc:
            log.warning("Socket Mode: a %s envelope the bot cannot use: %s", request.type, exc)
        await client.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id, payload=payload))
