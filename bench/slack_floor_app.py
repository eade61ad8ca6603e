"""The Slack floor: the same ASGI stack (Starlette on uvicorn) verifying the signature and answering a static reply.

    python bench/slack_floor_app.py --port PORT [--delay-service SECONDS]

``POST /slack/commands``: slack_sdk's SignatureVerifier on the raw body, then a fixed Block Kit reply. With
``--delay-service S`` it instead serves a stand-in Pet Store that answers ``GET /v1/pets/{id}`` after S seconds
(the slowed service of the delayed-path measurement).
"""

from __future__ import annotations

import argparse
import asyncio
import os

import uvicorn
from slack_sdk.signature import SignatureVerifier
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

REPLY = {
    "response_type": "ephemeral",
    "text": "ok",
    "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "```\nok\n```"}}],
}


def floor_app(secret: str) -> Starlette:
    verifier = SignatureVerifier(secret)

    async def commands(request: Request) -> Response:
        body = await request.body()
        if not verifier.is_valid_request(body, dict(request.headers)):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        return JSONResponse(REPLY)

    return Starlette(routes=[Route("/slack/commands", commands, methods=["POST"])])


def slow_service(delay: float) -> Starlette:
    async def get_pet(request: Request) -> Response:
        await asyncio.sleep(delay)
        pet_id = int(request.path_params["pet_id"])
        return JSONResponse({"id": pet_id, "name": "Slow", "categoryId": 1, "status": "available"})

    return Starlette(routes=[Route("/v1/pets/{pet_id:int}", get_pet)])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay-service", type=float, default=None)
    args = parser.parse_args()
    app = slow_service(args.delay_service) if args.delay_service else floor_app(os.environ["SLACK_SECRET"])
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
