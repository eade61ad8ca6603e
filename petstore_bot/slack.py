"""``petstore bot slack``: Slack (or Mattermost) slash commands and buttons, as a Starlette app.

``POST /slack/commands`` takes one command line (``/pets list sold``), ``POST /slack/interactions`` the Confirm and
Cancel buttons of a write waiting for confirmation, ``POST /slack/events`` the Events API (mentions of the bot and DMs
with it, see slack_events; answered with chat.postMessage), ``GET /healthz`` says the app is up. The same commands,
presses and events come over Socket Mode (slack_socket) to :meth:`SlackFace.socket_command`,
:meth:`SlackFace.socket_press` and :meth:`SlackFace.take_event`. Every POST is verified
before anything runs (a 401 otherwise, the reason logged, never the secret); whatever a sender puts in a header or
the body, the answer is a 4xx with one line (413 past ``max_body``, 400 for a form the app cannot use), never a 500
or a traceback. Slack's certificate check (a signed ``ssl_check=1``) gets an empty 200. A command answers in the
HTTP response when the service answers within ``ack_after`` seconds (1.5; Slack allows 3 in all), else an
acknowledgement goes back at once and the result is posted once to ``response_url``, which must be on the platform's
origin. A press by the person who asked settles the prompt: it is replaced (``replace_original``), its buttons gone.
The bot core (roles, confirmation, audit, rate limit, per-user state) is every chat face's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from bot_commands.outcome import Outcome
from bot_commands.results import ApprovalNeeded

from .chat import INTERNAL_ERROR, Incoming, Reply
from .core import BotCore
from .slack_acks import Acks
from .slack_events import ChatEvent, EventGate, chat_event
from .slack_forms import BadRequest, Command, Press, command_of, parse_form, press_of
from .slack_render import Message, mattermost_payload, message_for, prompt_verbs, slack_payload
from .slack_verify import MattermostToken, SlackSignature

if TYPE_CHECKING:
    from .slack_web import SlackWeb

__all__ = ["BadRequest", "Post", "SlackFace", "origin_of", "parse_form", "post_json"]

log = logging.getLogger("petstore_bot.slack")
Post = Callable[[str, dict[str, object]], Awaitable[None]]
"""Posts a JSON body to a response_url (slack_sdk's webhook client in production, a capture server in tests)."""

SLACK_ORIGIN = "https://hooks.slack.com"
MAX_BODY = 16_384
WORKING = "Working on it: {line}"
_NOT_A_PRESS = "payload is not a block_actions interaction"
#: What a settled prompt says once its write is posted to the channel (the asker would see it twice otherwise).
SETTLED = "Confirmed: the result is posted to the channel."


class ResponseRefused(Exception):
    """A response_url answered with an error status (the message says which)."""


class Refused(Exception):
    """A request that is not the platform's: 401, the reason (never a secret) to the log."""


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, lower-cased; "" when it is not an absolute http(s) URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname.lower()}{port}"


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
        web: SlackWeb | None = None,
    ) -> None:
        if (flavour == "mattermost") != (token is not None) or (flavour == "mattermost" and signature is not None):
            raise ValueError("mattermost needs a token, and slack no token")
        self.core, self.flavour = core, flavour
        self._post, self._signature, self._token = post, signature, token
        self._origin = origin_of(response_origin)
        self._acks, self._ack_after, self._max_body = Acks(ack_after), ack_after, max_body
        self._background: set[asyncio.Task[object]] = set()  # delayed responses on their way
        self._web, self._bot_user, self._gate = web, "", EventGate()
        self._told_no_token = False

    async def start(self) -> None:
        """Learn the bot's own user id (``auth.test``) when it answers mentions and DMs (``web`` given);
        SlackWebError when Slack refuses the bot token."""
        if self._web is not None and not self._bot_user:
            self._bot_user = await self._web.bot_user()
            # help: mentions and DMs work too
            self.core.addressing = replace(self.core.addressing, names=self.names, bare_in_direct=True)

    @property
    def names(self) -> tuple[str, ...]:
        """What people call the bot: its ``@name`` once :meth:`start` has learnt it (mentions and DMs), else none."""
        return (f"@{self._web.bot_name}",) if self._web is not None and self._web.bot_name else ()

    @property
    def can_announce(self) -> bool:
        """Whether the face can post unasked (Slack with a bot token: ``chat.postMessage``)."""
        return self._web is not None and self.flavour == "slack"

    async def announce(self, room: str, reply: Reply, /, *, key: str | None = None) -> bool:
        """Post ``reply`` in ``room`` (``TEAM/CHANNEL`` or ``CHANNEL``) unasked, with ``chat.postMessage`` and the
        bot token; the text escaped as every reply is, with Approve and Deny under a request for approval (the
        reply's outcome says). Slack keeps no key: ``key`` is not used. Whether Slack took it."""
        if self._web is None:
            return False
        channel = room.rpartition("/")[2]
        result = reply.outcome.result if reply.outcome is not None else None
        prompt = result if isinstance(result, ApprovalNeeded) else None
        payload = slack_payload(Message(text=reply.text, in_channel=True, confirm=prompt))
        return await self._web.post_message(channel, payload, None)

    def app(self) -> Starlette:
        """The HTTP endpoints (Slack's need its signature check: ``signature``)."""
        if self.flavour == "slack" and self._signature is None:
            raise ValueError("the HTTP endpoints of the slack flavour need a signature check")
        return Starlette(
            routes=[
                Route("/slack/commands", _Endpoint(self._commands), methods=["POST"]),
                Route("/slack/interactions", self._interactions, methods=["POST"]),
                *([Route("/slack/events", self._events, methods=["POST"])] if self.flavour == "slack" else []),
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
            command = command_of(form, flavour=self.flavour, prefix=self.core.prefix)
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
            press = press_of(
                _json(self._verified_form(request, body).get("payload", ""), what=_NOT_A_PRESS), prefix=self.core.prefix
            )
        except (BadRequest, Refused) as exc:
            return _refusal(request, exc, "an interaction")
        except ClientDisconnect:
            return Response(status_code=400)
        self._spawn(self._answer_press(press))
        return Response(status_code=200)

    async def _events(self, request: Request) -> Response:
        """The Events API over HTTP: Slack's URL check answered with its challenge; an event acknowledged at once
        (Slack waits 3 s, then sends it again) and answered in a task of its own."""
        try:
            body = await self._body(request)
            self._verify(request, body)
            payload = _json(body.decode("utf-8"), what="body is not a JSON object")
        except (BadRequest, Refused) as exc:
            return _refusal(request, exc, "an event")
        except ClientDisconnect:
            return Response(status_code=400)
        if payload.get("type") == "url_verification":
            challenge = payload.get("challenge")
            if not isinstance(challenge, str):
                return JSONResponse({"error": "url_verification without a challenge"}, status_code=400)
            return JSONResponse({"challenge": challenge})
        retry = request.headers.get("x-slack-retry-num", "")
        number = int(retry) if retry.isascii() and retry.isdigit() and len(retry) < 6 else None
        self.take_event(payload, retry=number, reason=request.headers.get("x-slack-retry-reason"))
        return Response(status_code=200)

    # -- Socket Mode (slack_socket): the same work, acknowledged over the WebSocket -------------------------

    async def socket_command(self, form: Mapping[str, object]) -> dict[str, object]:
        """A slash command's envelope: the acknowledgement's payload is the answer when the command ends within
        ``ack_after``, else "Working on it" and the answer goes to response_url when it ends. BadRequest when
        ``form`` is not a slash command."""
        command = command_of(form, flavour="slack", prefix=self.core.prefix)
        task = asyncio.ensure_future(self._run(command.incoming))
        done, _ = await asyncio.wait({task}, timeout=self._ack_after)
        if task in done:
            message = task.result()
            return {} if message is None else slack_payload(message, asker=command.asker)

        async def later() -> None:
            message = await task
            if message is not None:
                await self._post_to(command.response_url, slack_payload(message, asker=command.asker))

        self._spawn(later())
        return slack_payload(self._working(command))

    def socket_press(self, payload: Mapping[str, object]) -> None:
        """A Confirm/Cancel press's envelope (acknowledged at once: Slack reads no answer from a button's
        acknowledgement); the answer goes to response_url. BadRequest when it is not such a press."""
        self._spawn(self._answer_press(press_of(payload, prefix=self.core.prefix)))

    def take_event(self, payload: Mapping[str, object], *, retry: int | None = None, reason: str | None = None) -> None:
        """An Events API payload (acknowledged at once by the caller): a command in a mention or a DM is answered
        with chat.postMessage; a repeat of an event already taken (Slack's retry) is not run again."""
        if payload.get("type") != "event_callback" or not self._gate.first(payload, retry=retry, reason=reason):
            return
        if self._web is None or not self._bot_user:
            if not self._told_no_token:  # once: Slack keeps sending events the app subscribed to
                log.warning("an event came but [bot.slack] bot_token is not set: mentions and DMs are not answered")
                self._told_no_token = True
            return
        prefix = self.core.prefix
        chat = chat_event(payload, bot_user=self._bot_user, prefix=prefix, command=prefix.strip())
        if chat is not None:
            self._spawn(self._answer_event(chat, self._web))

    # -- the work -------------------------------------------------------------------------------------------

    def _working(self, command: Command) -> Message:
        line = command.incoming.text.removeprefix(self.core.prefix)
        return Message(text=WORKING.format(line=line), in_channel=False)

    async def _answer(self, command: Command, request: Request, send: Send) -> None:
        """The result as the response when the command ends within ``ack_after``; else, at ``ack_after``, an
        acknowledgement as the response and the result posted to response_url once it ends.

        The command runs in this request's own task, its acknowledgement due on the app's one timer (see
        slack_acks): most commands end at once, and a task (or a timer) of their own would cost them more than
        the rest of their work.
        """
        loop, this = asyncio.get_running_loop(), asyncio.current_task()
        acked: list[asyncio.Task[None]] = []

        def acknowledge() -> None:
            working = self._payload(self._working(command), request, command.incoming)
            acked.append(loop.create_task(JSONResponse(working)(request.scope, request.receive, send)))
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
                await self._post_to(command.response_url, self._payload(message, request, command.incoming))
            return
        if message is None:  # nothing to say (a slash command always gets a reply: see _run and ratelimit)
            await Response(status_code=200)(request.scope, request.receive, send)
        else:
            await JSONResponse(self._payload(message, request, command.incoming))(request.scope, request.receive, send)

    async def _run(self, incoming: Incoming) -> Message | None:
        if not self.core.addressed(incoming.text):
            incoming = replace(incoming, text=f"{self.core.prefix}help")
        try:
            answer = await self.core.answer(incoming)
        except Exception:  # a bug, or the audit log's disk refusing: the person gets one line, the log the details
            log.exception("the command %r of %s failed inside the bot", incoming.text, incoming.user)
            return Message(text=INTERNAL_ERROR, in_channel=False)
        if isinstance(answer, Outcome):
            return message_for(
                answer, prefix=self.core.prefix, commands=self.core.commands, addressing=self.core.addressing
            )
        return None if answer is None else Message(text=answer, in_channel=False)

    async def _answer_press(self, press: Press) -> None:
        """The answer to a press, to response_url. The asker's press settles the prompt: it is replaced
        (``replace_original``, its buttons gone) by the answer; when the answer is a write for the channel and the
        prompt was the asker's alone, the write is posted to the channel and the prompt says so, rather than show
        the asker the same answer twice. Anything else (another person's press, a code already used) is told to the
        presser alone and replaces nothing."""
        message = await self._run(press.incoming)
        if message is None:
            return
        if not (press.settles and message.settles):
            await self._post_to(press.response_url, slack_payload(replace(message, in_channel=False)))
            return
        if message.in_channel and press.ephemeral:
            announced = {**slack_payload(message), "replace_original": False}
            if await self._post_to(press.response_url, announced):
                message = Message(text=SETTLED, in_channel=False)
        await self._post_to(press.response_url, {**slack_payload(message), "replace_original": True})

    async def _answer_event(self, chat: ChatEvent, web: SlackWeb) -> None:
        message = await self._run(chat.incoming)
        if message is not None:
            await web.post_message(chat.channel, slack_payload(message, asker=chat.asker), chat.thread_ts)

    def _spawn(self, work: Awaitable[None]) -> None:
        """Run ``work`` (a late answer) in a task of its own, which drain() waits for."""
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _post_to(self, response_url: str, payload: dict[str, object]) -> bool:
        """Post ``payload`` once to response_url, when it is on the platform's origin; whether it was taken (a
        failure is logged)."""
        if origin_of(response_url) != self._origin:
            log.warning("not posting to response_url: it is not on %s", self._origin)
            return False
        try:
            await self._post(response_url, payload)
        except Exception as exc:  # noqa: BLE001 -- the app stays up; the audit log has the write
            log.error(
                "posting the delayed response failed: %s",
                exc if isinstance(exc, ResponseRefused) else type(exc).__name__,
            )
            return False
        return True

    def _payload(self, message: Message, request: Request | None, asked: Incoming) -> dict[str, object]:
        """``message`` as the answer to the command ``asked``; on Mattermost its buttons carry a context signed with
        the token over the action, the code, the asker, the channel and a fresh nonce, so a press is refused unless
        it comes with the context of this very prompt from this channel."""
        if self.flavour == "slack":
            return slack_payload(message, asker=asked.user.removeprefix("slack:"))
        assert self._token is not None
        context = None
        if message.confirm is not None:  # a fresh nonce per prompt: the press's request id, so its write's key
            code, nonce, user, channel = message.confirm.code, secrets.token_urlsafe(16), asked.user, asked.room
            context = {
                action: {
                    "action": action,
                    "code": code,
                    "user": user,
                    "channel": channel,
                    "nonce": nonce,
                    "sig": self._token.sign(action, code, user, channel, nonce),
                }
                for action in prompt_verbs(message)
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
            isinstance(context.get(k), str) for k in ("action", "code", "user", "channel", "nonce", "sig")
        ):
            raise Refused("a button press without a signed context")
        signed = (context["action"], context["code"], context["user"], context["channel"], context["nonce"])
        refused = self._token.check_signed(context["sig"], *signed)
        if refused or context["action"] not in ("confirm", "cancel", "approve", "deny"):
            raise Refused(refused or "unknown action")
        user, channel = data.get("user_id"), data.get("channel_id")
        if not isinstance(user, str) or not isinstance(channel, str) or not user or not channel:
            raise BadRequest("user_id and channel_id are required")
        if channel != context["channel"]:
            raise Refused("a button of a prompt posted in another channel")
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
        settles = incoming.user == context["user"] or context["action"] in ("approve", "deny")
        if settles and message.settles:  # the asker's press (anyone's approval): the prompt is replaced
            return JSONResponse({"update": {"message": text, "props": {}}})
        return JSONResponse({"ephemeral_text": text})

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

    def _verify(self, request: Request, body: bytes) -> None:
        """Refused unless ``request`` carries Slack's signature of ``body``."""
        assert self._signature is not None
        refused = self._signature.check(headers=request.headers, body=body)
        if refused:
            raise Refused(refused)

    def _verified_form(self, request: Request, body: bytes) -> dict[str, str]:
        """The form of a request that is the platform's; Refused otherwise, before anything else looks at it."""
        if self._signature is not None:
            self._verify(request, body)
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


class _Endpoint:
    """A raw ASGI endpoint for a Route (Starlette wraps plain functions and methods as request handlers)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)


def _json(text: str, *, what: str) -> dict[str, object]:
    """A JSON object (an interaction's ``payload`` field, an event's body); BadRequest saying ``what`` otherwise."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the decoder goes
        raise BadRequest(what) from None
    if not isinstance(data, dict):
        raise BadRequest(what)
    return data


def _refusal(request: Request, exc: BadRequest | Refused, what: str) -> Response:
    if isinstance(exc, BadRequest):
        return JSONResponse({"error": str(exc)}, status_code=exc.status)
    log.warning("refused %s from %s: %s", what, request.client.host if request.client else "?", exc)
    return JSONResponse({"error": "unauthorized"}, status_code=401)


async def post_json(url: str, payload: dict[str, object]) -> None:
    """POST ``payload`` to a response_url with slack_sdk's webhook client (one try: a delayed reply is sent once);
    ResponseRefused when it answers with an error status."""
    from slack_sdk.webhook.async_client import AsyncWebhookClient

    response = await AsyncWebhookClient(url, timeout=10).send_dict(payload)
    if response.status_code >= 300:
        raise ResponseRefused(f"response_url answered {response.status_code}")
