"""The service's OpenAPI 3 document (served at ``/v1/openapi.json``), built once at import."""

from __future__ import annotations

from typing import Any

from .wire import (
    CURSOR_PATTERN,
    ERROR_CODES,
    INT64_MAX,
    INT64_MIN,
    LIMIT_DEFAULT,
    LIMIT_MAX,
    LIMIT_MIN,
    NAME_MAX_LENGTH,
    STATUSES,
)

__all__ = ["DOCUMENT"]

_INT64 = {"type": "integer", "format": "int64", "minimum": INT64_MIN, "maximum": INT64_MAX}
_NAME = {"type": "string", "minLength": 1, "maxLength": NAME_MAX_LENGTH, "description": "The animal's name."}
_STRING = {"type": "string"}

_DESCRIPTION = """\
The Pet Store animals interface, as implemented by this project.

Error bodies are always `{code, message, status}` with `status` equal to the HTTP
status. Codes: `bad_request` 400, `unauthorized` 401, `not_found` 404,
`method_not_allowed` 405 (any method not listed here; `Allow` names the allowed ones),
`payload_too_large` 413, `unsupported_media_type` 415, `idempotency_key_reused` 422,
`internal_error` 500, `service_unavailable` 503 (health check only).

Choices where the contract is silent: `status` omitted on creation stays absent;
`name` is 1 to 200 characters; pages continue through `Link: <...>; rel="next"`
(a relative reference, `<?limit=..&cursor=..>`) with an opaque `cursor` (order by
id); invalid `limit`, `status`, `cursor` or an unknown query parameter is a 400;
a `petId` that is not an int64 is a 404; the orders listing is an empty array
(no operation creates orders); this document is served without authentication."""


def _ref(kind: str, name: str) -> dict[str, str]:
    return {"$ref": f"#/components/{kind}/{name}"}


def _body(description: str, schema: str, headers: dict[str, Any] | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": description,
        "content": {"application/json": {"schema": _ref("schemas", schema)}},
    }
    if headers:
        response["headers"] = headers
    return response


def _error(description: str, headers: dict[str, Any] | None = None) -> dict[str, Any]:
    return _body(description, "Error", headers)


def _header(description: str, *, required: bool = False, **schema: Any) -> dict[str, Any]:
    return {"description": description, "required": required, "schema": {"type": "string", **schema}}


def _errors(*statuses: int) -> dict[str, Any]:
    names = {
        400: "BadRequest",
        401: "Unauthorized",
        404: "NotFound",
        413: "PayloadTooLarge",
        415: "UnsupportedMediaType",
        422: "IdempotencyKeyReused",
        500: "InternalError",
        503: "ServiceUnavailable",
    }
    return {str(status): _ref("responses", names[status]) for status in (*statuses, 401, 500, 503)}


def _schemas() -> dict[str, Any]:
    pet_status = {"type": "string", "enum": list(STATUSES), "description": "Availability of the animal."}
    category = {**_INT64, "description": "Identifier of the category the animal belongs to."}
    return {
        "PetStatus": pet_status,
        "NewPet": {
            "type": "object",
            "required": ["name", "categoryId"],
            "additionalProperties": False,
            "properties": {"name": _NAME, "categoryId": category, "status": _ref("schemas", "PetStatus")},
        },
        "Pet": {
            "type": "object",
            "required": ["id", "name", "categoryId"],
            "properties": {
                "id": {**_INT64, "description": "Unique identifier, assigned by the service on creation."},
                "name": _NAME,
                "categoryId": category,
                "status": _ref("schemas", "PetStatus"),
            },
        },
        "Pets": {"type": "array", "items": _ref("schemas", "Pet")},
        "Error": {
            "type": "object",
            "required": ["code", "message", "status"],
            "properties": {
                "code": {"type": "string", "enum": list(ERROR_CODES.values())},
                "message": _STRING,
                "status": {"type": "integer", "format": "int32"},
            },
        },
    }


def _responses() -> dict[str, Any]:
    auth = {"WWW-Authenticate": _header("Always `Bearer`.", required=True)}
    return {
        "BadRequest": _error("Invalid input; the message names the field or parameter."),
        "Unauthorized": _error("API key missing or invalid.", auth),
        "NotFound": _error("The requested animal cannot be found."),
        "MethodNotAllowed": _error(
            "Answered to any method not listed for a path.",
            {"Allow": _header("The methods the path accepts.", required=True)},
        ),
        "PayloadTooLarge": _error("The request body is over the size cap (16384 bytes by default)."),
        "UnsupportedMediaType": _error("The request body is not `application/json`."),
        "IdempotencyKeyReused": _error("The Idempotency-Key was already used with a different body."),
        "InternalError": _error("The service failed; no details are exposed."),
        "ServiceUnavailable": _error(
            "The database does not answer (down, restarting): try again after `Retry-After` seconds.",
            {"Retry-After": _header("Seconds to wait before trying again.", required=True, pattern="^[0-9]+$")},
        ),
    }


def _list_pets() -> dict[str, Any]:
    link = _header(
        '`<?limit=..&cursor=..>; rel="next"` when more animals follow this page: a relative reference, '
        "resolved against the request URL (RFC 3986), so it survives proxies and path prefixes."
    )
    return {
        "operationId": "listPets",
        "tags": ["Pets"],
        "summary": "List animals",
        "description": "A page of animals in id order; the next page is at the `Link` header's URL.",
        "parameters": [
            {
                "name": "limit",
                "in": "query",
                "description": "Maximum number of animals to return.",
                "schema": {
                    "type": "integer",
                    "minimum": LIMIT_MIN,
                    "maximum": LIMIT_MAX,
                    "default": LIMIT_DEFAULT,
                },
            },
            {
                "name": "status",
                "in": "query",
                "description": "Filter by availability.",
                "schema": _ref("schemas", "PetStatus"),
            },
            {
                "name": "cursor",
                "in": "query",
                "description": "Opaque token taken from a `Link` header.",
                "schema": {"type": "string", "pattern": CURSOR_PATTERN},
            },
        ],
        "responses": {"200": _body("A page of animals.", "Pets", {"Link": link}), **_errors(400)},
    }


def _create_pet() -> dict[str, Any]:
    replayed = _header("`true` when this is the stored answer to an earlier request with the same key.", enum=["true"])
    return {
        "operationId": "createPet",
        "tags": ["Pets"],
        "summary": "Add an animal",
        "parameters": [
            {
                "name": "Idempotency-Key",
                "in": "header",
                "description": "Repeating a create with the same key and body returns the first result, "
                "creating nothing; the same key with another body is a 422. Keys are kept for 24 hours.",
                "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"},
            }
        ],
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": _ref("schemas", "NewPet")}},
        },
        "responses": {
            "201": _body("Animal added, with its assigned id.", "Pet", {"Idempotent-Replayed": replayed}),
            **_errors(400, 413, 415, 422),
        },
    }


def _get_pet() -> dict[str, Any]:
    headers = {
        "Deprecation": _header("RFC 9745: `@1735689600`.", required=True, pattern="^@[0-9]+$"),
        "Sunset": _header("RFC 8594: `Thu, 05 Dec 2030 00:00:00 GMT`.", required=True),
        "Link": _header('`<../pets>; rel="successor-version"` (relative to the request URL).', required=True),
    }
    return {
        "operationId": "getPet",
        "tags": ["Pets"],
        "summary": "Get an animal",
        "description": "Deprecated; removed on 5 December 2030. Use `GET /pets` with a `status` filter.",
        "deprecated": True,
        "parameters": [
            {
                "name": "petId",
                "in": "path",
                "required": True,
                "description": "Identifier of the animal.",
                "schema": _INT64,
            }
        ],
        "responses": {"200": _body("The animal.", "Pet", headers), **_errors(400, 404)},
    }


def _list_orders() -> dict[str, Any]:
    orders = {"type": "array", "items": {"type": "object"}, "maxItems": 0}
    return {
        "operationId": "listOrders",
        "tags": ["Store"],
        "summary": "List orders",
        "description": "Always an empty array: no operation creates orders.",
        "responses": {
            "200": {"description": "The orders.", "content": {"application/json": {"schema": orders}}},
            **_errors(400),
        },
    }


def _probe(*, operation: str, summary: str, description: str, database: bool) -> dict[str, Any]:
    ok = {"type": "object", "required": ["status"], "properties": {"status": {"type": "string", "enum": ["ok"]}}}
    responses: dict[str, Any] = {
        "200": {"description": "Healthy.", "content": {"application/json": {"schema": ok}}},
        "400": _ref("responses", "BadRequest"),
        "500": _ref("responses", "InternalError"),
    }
    if database:
        responses["503"] = _ref("responses", "ServiceUnavailable")
    return {
        "operationId": operation,
        "tags": ["Operations"],
        "summary": summary,
        "description": description,
        "security": [],
        "responses": responses,
    }


def _probes() -> dict[str, Any]:
    ready = "200 when the database answers, else 503 (within a few seconds). No key needed."
    return {
        "/healthz": {"get": _probe(operation="getHealth", summary="Health check", description=ready, database=True)},
        "/readyz": {"get": _probe(operation="getReady", summary="Readiness probe", description=ready, database=True)},
        "/livez": {
            "get": _probe(
                operation="getLive",
                summary="Liveness probe",
                description="200 while the process serves requests, whatever the database does. No key needed.",
                database=False,
            )
        },
    }


def _build() -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "Pet Store", "version": "1.0.0", "description": _DESCRIPTION},
        "servers": [{"url": "/v1"}],
        "tags": [{"name": "Pets"}, {"name": "Store"}, {"name": "Operations"}],
        "security": [{"bearerAuth": []}],
        "paths": {
            "/pets": {"get": _list_pets(), "post": _create_pet()},
            "/pets/{petId}": {"get": _get_pet()},
            "/store/orders": {"get": _list_orders()},
            **_probes(),
        },
        "components": {
            "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer"}},
            "schemas": _schemas(),
            "responses": _responses(),
        },
    }


#: The document; treat as read-only.
DOCUMENT: dict[str, Any] = _build()
