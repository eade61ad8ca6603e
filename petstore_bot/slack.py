"""``petstore bot slack``: Slack (or Mattermost) slash commands and buttons, as a Starlette app.

``POST /slack/commands`` takes one command line (``/pets list sold``), ``POST /slack/interactions`` the Confirm and
Cancel buttons of a write waiting for confirmation, ``GET /healthz`` says the app is up. Every POST is verified
before anything runs (a 401 otherwise, the reason logged, never the secret); whatever a sender puts in a header or
the body, the answer is a 4xx with one line (413 past ``max_body``, 400 for a form the app cannot use), never a 500
or a traceback. Slack's certificate check (a signed ``ssl_check=1``) gets an empty 200. A command answers in the
HTTP response when the service answers within ``ack_after`` seconds (1.5; Slack allows 3 in all), else an
acknowledgement goes back at once and the result is posted once to ``response_url``, which must be on the platform's
origin. The bot core (roles, confirmation, audit, rate limit, per-user state) is every chat face's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Literal
from urllib.parse import parse_qsl, urlsplit

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from bot_commands.outcome import Outcome

from .chat import INTERNAL_ERROR, Incoming
from .core import BotCore
from .slack_acks import Acks
from .slack_render import CANCEL_ACTION, CONFIRM_ACTION, Message, mattermost_payload, message_for, slack_payload
from .slack_verify import MattermostToken, SlackSignature

__all__ = ["BadRequest", "Post", "SlackFace", "origin_of", "parse_form", "post_json"]

log = logging.getLogger("petstore_bot.slack")
Post = Callable[[str, dict[str, object]], Awaitable[None]]
"""Posts a JSON body to a response_url (slack_sdk's webhook client in production, a capture server in tests)."""

SLACK_ORIGIN = "https://hooks.slack.com"
MAX_BODY = 16_384
#: Fields a form may have (a slash command has about a dozen).
MAX_FIELDS = 64
WORKING = "Working on it: {line}"
_COMMAND_FIELDS = ("command", "text", "user_id", "channel_id", "response_url")


class BadRequest(Exception):
    """A request the app cannot use: ``status`` (400, or 413 for a body too large) with this one line."""

    def __init__(self, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class Refused(Exception):
    """A request that is not the platform's: 401, the reason (never a secret) to the log."""


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, lower-cased; "" when it is not an absolute http(s) URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname.lower()}{port}"


@dataclass(frozen=True, slots=True)
class _Command:
    incoming: Incoming
    response_url: str


class SlackFace:
    """The app; ``flavour`` is ``slack`` (signed requests, Block Kit) or ``mattermost`` (token, Markdown)."""

    def __init__(
        self,
        *,
        core: BotCore,
        flavour: Literal["slack", "mattermost"],
        post: Post,
        signature: SlackSignature | None = None,
        token: MattermostToken | None = None,
        response_origin: str = SLACK_ORIGIN,
        ack_after: float = 1.5,
        max_body: int = MAX_BODY,
    ) -> None:
        if (flavour == "slack") != (signature is not None) or (flavour == "mattermost") != (token is not None):
            raise ValueError("slack needs a signature check, mattermost a token")
        self.core, self.flavour = core, flavour
        self._post, self._signature, self._token = post, signature, token
        self._origin = origin_of(response_origin)
        self._acks, self._max_body = Acks(ack_after), max_body
        self._background: set[asyncio.Task[object]] = set()  # delayed responses on their way

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/slack/commands", _Endpoint(self._commands), methods=["POST"]),
                Route("/slack/interactions", self._interactions, methods=["POST"]),
                Route("/healthz", self._health, methods=["GET"]),
            ],
            lifespan=self._lifespan,
        )

    @contextlib.asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        yield
        await self.drain()

    async def drain(self) -> None:
        """Wait for delayed responses still on their way (at shutdown)."""
        while self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

    # -- endpoints ------------------------------------------------------------------------------------------

    async def _health(self, request: Request) -> Response:
        return JSONResponse({"ok": True})

    async def _commands(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A raw ASGI endpoint: the answer may be the response, or come later to response_url (see _answer)."""
        request = Request(scope, receive)
        try:
            form = self._verified_form(request, await self._body(request))
            if self.flavour == "slack" and form.get("ssl_check") == "1":  # Slack checking the certificate: all is well
                await Response(status_code=200)(scope, receive, send)
                return
            command = self._command(form)
        except (BadRequest, Refused) as exc:
            await _refusal(request, exc, "a command")(scope, receive, send)
            return
        except ClientDisconnect:  # gone before its body ended: nobody to answer
            return
        await self._answer(command, request, send)

    async def _interactions(self, request: Request) -> Response:
        try:
            body = await self._body(request)
            if self.flavour == "mattermost":
                return await self._mattermost_press(request, body)
            press, response_url = _slack_press(self._verified_form(request, body), prefix=self.core.prefix)
        except (BadRequest, Refused) as exc:
            return _refusal(request, exc, "an interaction")
        except ClientDisconnect:
            return Response(status_code=400)
        self._later(self._run(press), response_url, replace=True)
        return Response(status_code=200)

    # -- the work -------------------------------------------------------------------------------------------

    async def _answer(self, command: _Command, request: Request, send: Send) -> None:
        """The result as the response when the command ends within ``ack_after``; else, at ``ack_after``, an
        acknowledgement as the response and the result posted to response_url once it ends.

        The command runs in this request's own task, its acknowledgement due on the app's one timer (see
        slack_acks): most commands end at once, and a task (or a timer) of their own would cost them more than
        the rest of their work.
        """
        loop, this = asyncio.get_running_loop(), asyncio.current_task()
        acked: list[asyncio.Task[None]] = []

        def acknowledge() -> None:
            line = command.incoming.text.removeprefix(self.core.prefix)
            working = Message(text=WORKING.format(line=line), in_channel=False)
            acked.append(
                loop.create_task(
                    JSONResponse(self._payload(working, request, ""))(request.scope, request.receive, send)
                )
            )
            if this is not None:  # drain() waits for the rest of this request: the delayed response
                self._background.add(this)
                this.add_done_callback(self._background.discard)

        due = self._acks.start(acknowledge)
        try:
            message = await self._run(command.incoming)
        finally:
            self._acks.end(due)
        if acked:
            await acked[0]
            if message is not None:
                await self._deliver(
                    message, command.response_url, replace=False, request=request, user=command.incoming.user
                )
            return
        if message is None:  # nothing to say (a slash command always gets a reply: see _run and ratelimit)
            await Response(status_code=200)(request.scope, request.receive, send)
        else:
            await JSONResponse(self._payload(message, request, command.incoming.user))(
                request.scope, request.receive, send
            )

    async def _run(self, incoming: Incoming) -> Message | None:
        if not self.core.addressed(incoming.text):
            incoming = replace(incoming, text=f"{self.core.prefix}help")
        try:
            answer = await self.core.answer(incoming)
        except Exception:  # a bug, or the audit log's disk refusing: the person gets one line, the log the details
            log.exception("the command %r of %s failed inside the bot", incoming.text, incoming.user)
            return Message(text=INTERNAL_ERROR, in_channel=False)
        if isinstance(answer, Outcome):
            return message_for(answer, prefix=self.core.prefix, commands=self.core.commands)
        return None if answer is None else Message(text=answer, in_channel=False)

    def _later(self, work: Awaitable[Message | None], response_url: str, *, replace: bool) -> None:
        """Post the result of ``work`` to response_url when it ends, in a task of its own (a button press)."""

        async def deliver() -> None:
            message = await work
            if message is not None:
                await self._deliver(message, response_url, replace=replace, request=None, user="")

        task = asyncio.ensure_future(deliver())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _deliver(
        self, message: Message, response_url: str, *, replace: bool, request: Request | None, user: str
    ) -> None:
        """Post ``message`` once to response_url, when it is on the platform's origin; a failure is logged."""
        if origin_of(response_url) != self._origin:
            log.warning("not posting to response_url: it is not on %s", self._origin)
            return
        payload = self._payload(message, request, user) if request is not None else slack_payload(message)
        if self.flavour == "slack" and replace and message.confirm is None:
            payload["replace_original"] = not message.in_channel
        try:
            await self._post(response_url, payload)
        except Exception as exc:  # noqa: BLE001 -- the app stays up; the audit log has the write
            log.error("posting the delayed response failed: %s", type(exc).__name__)

    def _payload(self, message: Message, request: Request | None, user: str) -> dict[str, object]:
        if self.flavour == "slack":
            return slack_payload(message)
        assert self._token is not None
        context = None
        if message.confirm is not None:  # a fresh nonce per prompt: the press's request id, so its write's key
            code, nonce = message.confirm.code, secrets.token_urlsafe(16)
            context = {
                action: {
                    "action": action,
                    "code": code,
                    "user": user,
                    "nonce": nonce,
                    "sig": self._token.sign(action, code, user, nonce),
                }
                for action in ("confirm", "cancel")
            }
        url = str(request.url_for("_interactions")) if request is not None else ""
        return mattermost_payload(message, action_url=url, context=context)

    async def _mattermost_press(self, request: Request, body: bytes) -> Response:
        assert self._token is not None
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than the decoder goes
            raise BadRequest("body is not JSON") from None
        context = data.get("context") if isinstance(data, dict) else None
        if not isinstance(context, dict) or not all(
            isinstance(context.get(k), str) for k in ("action", "code", "user", "nonce", "sig")
        ):
            raise Refused("a button press without a signed context")
        signed = (context["action"], context["code"], context["user"], context["nonce"])
        refused = self._token.check_signed(context["sig"], *signed)
        if refused or context["action"] not in ("confirm", "cancel"):
            raise Refused(refused or "unknown action")
        user, channel = data.get("user_id"), data.get("channel_id")
        if not isinstance(user, str) or not isinstance(channel, str) or not user or not channel:
            raise BadRequest("user_id and channel_id are required")
        incoming = Incoming(
            platform="mattermost",
            room=channel,
            user=f"mattermost:{user}",
            event_id=f"press:{context['nonce']}",  # a double click, or a press sent again, is the same request
            text=f"{self.core.prefix}{context['action']} {context['code']}",
            private=True,
        )
        message = await self._run(incoming)
        if message is None:
            return JSONResponse({})
        text = mattermost_payload(message, action_url="")["text"]
        return JSONResponse({"update": {"message": text}} if message.in_channel else {"ephemeral_text": text})

    # -- parsing --------------------------------------------------------------------------------------------

    async def _body(self, request: Request) -> bytes:
        """The body, refused (413) past max_body without reading the rest (``request.body()`` has no limit)."""
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self._max_body:
                raise BadRequest(f"request body too large: at most {self._max_body} bytes", status=413)
            chunks.append(chunk)
        return b"".join(chunks)

    def _verified_form(self, request: Request, body: bytes) -> dict[str, str]:
        """The form of a request that is the platform's; Refused otherwise, before anything else looks at it."""
        if self._signature is not None:
            refused = self._signature.check(headers=request.headers, body=body)
            if refused:
                raise Refused(refused)
            return parse_form(body)
        assert self._token is not None
        try:
            form = parse_form(body)
        except BadRequest as exc:  # no token can be read from it
            raise Refused(f"no token in the request: {exc}") from None
        refused = self._token.check(token=form.get("token"))
        if refused:
            raise Refused(refused)
        return form

    def _command(self, form: Mapping[str, str]) -> _Command:
        missing = [name for name in _COMMAND_FIELDS if name not in form]
        if self.flavour == "slack" and "team_id" not in form:
            missing.append("team_id")
        if missing:
            raise BadRequest(f"missing form fields: {', '.join(missing)}")
        if len(form["text"]) > 4000:
            raise BadRequest("command text too long: at most 4000 characters")
        if self.flavour == "slack":
            team = form["team_id"]
            user, room = f"slack:{team}/{form['user_id']}", f"{team}/{form['channel_id']}"
        else:
            user, room = f"mattermost:{form['user_id']}", form["channel_id"]
        text = f"{self.core.prefix}{form['text'].strip()}"
        # The platform's id of this command names its write (the Idempotency-Key derives from it). Without one
        # (Mattermost may send no trigger_id) two identical commands are two requests: a fresh nonce each, and a
        # write waits for its Confirm button, whose context carries the nonce that names it.
        trigger = form.get("trigger_id", "")
        event = trigger or f"nonce:{secrets.token_urlsafe(16)}"
        incoming = Incoming(
            platform=self.flavour,
            room=room,
            user=user,
            event_id=event,
            text=text,
            private=True,
            confirm_writes=not trigger,
        )
        return _Command(incoming=incoming, response_url=form["response_url"])


def parse_form(body: bytes, *, max_fields: int = MAX_FIELDS) -> dict[str, str]:
    """A UTF-8 ``application/x-www-form-urlencoded`` body as a dict (the first value of a repeated key); BadRequest,
    saying what is wrong, when it is not one."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("body is not UTF-8") from None
    if text.count("&") >= max_fields:
        raise BadRequest(f"too many form fields: at most {max_fields}")
    try:
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=True, max_num_fields=max_fields)
    except ValueError:
        raise BadRequest("body is not a URL-encoded form") from None
    form: dict[str, str] = {}
    for key, value in pairs:
        form.setdefault(key, value)
    return form


def _slack_press(form: Mapping[str, str], *, prefix: str) -> tuple[Incoming, str]:
    """The Incoming for a Confirm/Cancel press, and its response_url."""
    try:
        payload = json.loads(form["payload"])
        user, team = payload["user"]["id"], payload["team"]["id"]
        channel, action = payload["channel"]["id"], payload["actions"][0]
        kind, code, response_url = action["action_id"], action["value"], payload["response_url"]
    except (KeyError, IndexError, TypeError, ValueError, RecursionError):
        raise BadRequest("payload is not a block_actions interaction") from None
    if payload.get("type") != "block_actions" or kind not in (CONFIRM_ACTION, CANCEL_ACTION):
        raise BadRequest("only the Confirm and Cancel buttons are handled")
    if not all(isinstance(v, str) for v in (user, team, channel, code, response_url)):
        raise BadRequest("payload is not a block_actions interaction")
    verb = "confirm" if kind == CONFIRM_ACTION else "cancel"
    event = f"press:{payload.get('trigger_id') or action.get('action_ts') or ''}"
    incoming = Incoming(
        platform="slack",
        room=f"{team}/{channel}",
        user=f"slack:{team}/{user}",
        event_id=event,
        text=f"{prefix}{verb} {code}",
        private=True,
    )
    return incoming, response_url


class _Endpoint:
    """A raw ASGI endpoint for a Route (Starlette wraps plain functions and methods as request handlers)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)


def _refusal(request: Request, exc: BadRequest | Refused, what: str) -> Response:
    if isinstance(exc, BadRequest):
        return JSONResponse({"error": str(exc)}, status_code=exc.status)
    log.warning("refused %s from %s: %s", what, request.client.host if request.client else "?", exc)
    return JSONResponse({"error": "unauthorized"}, status_code=401)


async def post_json(url: str, payload: dict[str, object]) -> None:
    """POST ``payload`` to a response_url with slack_sdk's webhook client (one try: a delayed reply is sent once)."""
    from slack_sdk.webhook.async_client import AsyncWebhookClient

    response = await AsyncWebhookClient(url, timeout=10).send_dict(payload)
    if response.status_code >= 300:
        log.warning("response_url answered %d", response.status_code)
