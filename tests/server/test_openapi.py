"""The service's own OpenAPI document, and property-based tests of the service against it."""

from __future__ import annotations

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from pg_support import schema_url

from petstore_server.app import create_app
from petstore_server.openapi import DOCUMENT
from petstore_server.sqlite_store import SqliteStore
from petstore_server.store import PetStore

from .support import KEY, running_server


def test_document_matches_the_contract() -> None:
    paths = DOCUMENT["paths"]
    assert set(paths) == {"/pets", "/pets/{petId}", "/store/orders", "/healthz", "/readyz", "/livez"}
    operations = {op["operationId"]: op for path in paths.values() for op in path.values()}
    probes = {"getHealth", "getReady", "getLive"}
    assert set(operations) == {"listPets", "createPet", "getPet", "listOrders", *probes}
    assert all(operations[probe]["security"] == [] for probe in probes)
    assert operations["getPet"]["deprecated"] is True
    assert DOCUMENT["components"]["securitySchemes"]["bearerAuth"] == {"type": "http", "scheme": "bearer"}
    assert DOCUMENT["security"] == [{"bearerAuth": []}]
    assert DOCUMENT["servers"] == [{"url": "/v1"}]
    schemas = DOCUMENT["components"]["schemas"]
    assert schemas["PetStatus"]["enum"] == ["available", "pending", "sold"]
    assert schemas["Pet"]["required"] == ["id", "name", "categoryId"]
    assert schemas["NewPet"]["required"] == ["name", "categoryId"]
    for schema, field in [("Pet", "id"), ("Pet", "categoryId"), ("NewPet", "categoryId")]:
        assert schemas[schema]["properties"][field]["format"] == "int64"
    assert schemas["Error"]["required"] == ["code", "message", "status"]


@pytest.mark.parametrize(
    ("operation", "statuses"),
    [
        ("listPets", {"200", "400", "401", "500", "503"}),
        ("createPet", {"201", "400", "401", "413", "415", "422", "500", "503"}),
        ("getPet", {"200", "400", "401", "404", "500", "503"}),
        ("listOrders", {"200", "400", "401", "500", "503"}),
        ("getHealth", {"200", "400", "500", "503"}),
        ("getReady", {"200", "400", "500", "503"}),
        ("getLive", {"200", "400", "500"}),
    ],
)
def test_every_answerable_status_is_documented(operation: str, statuses: set[str]) -> None:
    ops = {op["operationId"]: op for path in DOCUMENT["paths"].values() for op in path.values()}
    assert set(ops[operation]["responses"]) == statuses


def test_get_pet_documents_its_deprecation_headers() -> None:
    headers = DOCUMENT["paths"]["/pets/{petId}"]["get"]["responses"]["200"]["headers"]
    assert {"Deprecation", "Sunset", "Link"} <= set(headers)
    assert "Link" in DOCUMENT["paths"]["/pets"]["get"]["responses"]["200"]["headers"]


async def test_served_document_is_the_built_one(anon: httpx.AsyncClient) -> None:
    assert (await anon.get("/openapi.json")).json() == DOCUMENT


def _config() -> schemathesis.Config:
    # A schema-valid create may meet 422 when its generated Idempotency-Key was drawn before with
    # another body: that depends on earlier requests, not on the schema, so 422 counts as accepted.
    accepted = ["2xx", "401", "404", "422"]
    return schemathesis.Config.from_dict(
        {
            "auth": {"openapi": {"bearerAuth": {"bearer": KEY}}},
            "checks": {"positive_data_acceptance": {"expected-statuses": accepted}},
        }
    )


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory):
    store = PetStore(tmp_path_factory.mktemp("schemathesis") / "pets.db")
    store.seed_sample()
    app = create_app(SqliteStore(store), api_keys=[KEY])
    yield schemathesis.openapi.from_asgi("/v1/openapi.json", app, config=_config())
    store.close()


@pytest.fixture(scope="module")
def api_schema_pg(pg_server, tmp_path_factory):
    """The real service on PostgreSQL (its pool lives in the server's own event loop)."""
    with schema_url(pg_server) as url, running_server(url, "--seed", keys=[KEY]) as (_, base, _):
        yield schemathesis.openapi.from_url(f"{base}/openapi.json", config=_config())


schema = schemathesis.pytest.from_fixture("api_schema")
schema_pg = schemathesis.pytest.from_fixture("api_schema_pg")


@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_service_conforms_to_its_document(case) -> None:
    """No 5xx, and every response (status, headers, body) conforms to the document."""
    case.call_and_validate()


@pytest.mark.slow
@schema_pg.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_service_on_postgresql_conforms_to_its_document(case) -> None:
    """The same, over a socket, with PostgreSQL behind the service."""
    case.call_and_validate()
