"""API keys: how they are issued, stored, checked and revoked; the gateway's 401, 429 and the
routes that need no key."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI, HTTPException
from fastapi.security import HTTPAuthorizationCredentials
from fastapi.testclient import TestClient
from pydantic import ValidationError

from services.gateway.app import create_app
from services.gateway.auth import AUTHENTICATED, PUBLIC_ROUTES, Authenticator, CallerDep, install_auth
from services.gateway.key_cache import KeyCache
from services.gateway.rate_limit import RateLimiter, retry_after_header
from services.gateway.security import install_client_address
from shared.adapters.embedded.api_keys import EmbeddedKeyStore
from shared.app.api_keys import authenticate, issue_key, parse_key
from shared.model.api_keys import ApiKeyRecord
from shared.settings import Settings
from tests.support.fakes import FakeKeyStore
from treerag.cli import main

# ---------------------------------------------------------------- keys


async def test_a_key_is_checked_against_its_stored_hash_and_the_store_never_holds_it() -> None:
    store = FakeKeyStore()
    issued = await issue_key(store, "acme")
    record = store.records[issued.record.key_id]

    assert re.fullmatch(r"trk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}", issued.key)
    assert parse_key(issued.key)[1] not in record.model_dump_json()  # type: ignore[index]
    assert (await authenticate(store, issued.key)) == record
    assert record.tenant == "acme" and not record.admin


async def test_a_wrong_secret_an_unknown_id_or_a_malformed_key_is_refused() -> None:
    store = FakeKeyStore()
    issued = await issue_key(store, "acme")
    key_id, secret = parse_key(issued.key)  # type: ignore[misc]
    other_secret = ("A" if secret[0] != "A" else "B") + secret[1:]
    unknown_id = ("0" if key_id[0] != "0" else "1") + key_id[1:]
    for key in (f"trk_{key_id}_{other_secret}", f"trk_{unknown_id}_{secret}", secret, "", issued.key + "x"):
        assert await authenticate(store, key) is None, key


async def test_a_revoked_key_is_refused() -> None:
    store = FakeKeyStore()
    issued = await issue_key(store, "acme", admin=True)
    assert await store.revoke(issued.record.key_id)
    assert await authenticate(store, issued.key) is None
    assert not await store.revoke("0" * 12)


async def test_keys_in_an_embedded_store_survive_a_reopen_and_keep_only_the_hash(tmp_path: Path) -> None:
    issued = await issue_key(EmbeddedKeyStore(tmp_path), "acme")
    reopened = EmbeddedKeyStore(tmp_path)
    assert await authenticate(reopened, issued.key) == issued.record
    stored = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert parse_key(issued.key)[1].encode() not in stored  # type: ignore[index]
    await reopened.revoke(issued.record.key_id)
    assert await authenticate(EmbeddedKeyStore(tmp_path), issued.key) is None
    assert await reopened.get("../../etc") is None


def test_the_cli_prints_a_new_key_once_lists_without_it_and_revokes(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keys", "--store", str(tmp_path), "create", "--tenant", "acme", "--admin"]) == 0
    key = capsys.readouterr().out.strip()
    key_id, secret = parse_key(key)  # type: ignore[misc]

    assert main(["keys", "--store", str(tmp_path), "list"]) == 0
    listing = capsys.readouterr().out
    assert key_id in listing and "acme" in listing and "admin" in listing and "active" in listing
    assert secret not in listing

    assert main(["keys", "--store", str(tmp_path), "revoke", key_id]) == 0
    assert main(["keys", "--store", str(tmp_path), "list"]) == 0
    assert "revoked" in capsys.readouterr().out
    assert asyncio.run(authenticate(EmbeddedKeyStore(tmp_path), key)) is None
    assert main(["keys", "--store", str(tmp_path), "revoke", "0" * 12]) == 1


def test_the_cli_refuses_a_tenant_name_it_could_not_scope(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        main(["keys", "--store", str(tmp_path), "create", "--tenant", "../acme"])


# ---------------------------------------------------------------- rate limit


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_key_gets_its_burst_then_waits_for_the_refill() -> None:
    clock = Clock()
    limiter = RateLimiter(rate_per_s=2.0, burst=3, clock=clock)
    assert [limiter.take("k1") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("k1") == pytest.approx(0.5)
    assert limiter.take("k2") == 0.0  # budgets are per key
    clock.now += 0.5
    assert limiter.take("k1") == 0.0
    assert limiter.take("k1") > 0
    clock.now += 60
    assert [limiter.take("k1") for _ in range(4)][:3] == [0.0, 0.0, 0.0]  # never more than the burst


def test_retry_after_is_whole_seconds_rounded_up() -> None:
    assert [retry_after_header(s) for s in (0.01, 1.0, 1.2)] == ["1", "1", "2"]


# ---------------------------------------------------------------- the gateway's dependency


def keyed_app(store: FakeKeyStore, peer: str = "testclient", **settings: Any) -> TestClient:
    app = FastAPI(dependencies=[AUTHENTICATED])
    install_auth(app, Settings(**settings), lambda: store)
    install_client_address(app, Settings(**settings))

    @app.get("/v1/whoami")
    async def whoami(caller: CallerDep) -> dict[str, Any]:
        return {"tenant": caller.tenant, "admin": caller.admin}

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    return TestClient(app, client=(peer, 50000))


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_a_valid_key_calls_as_its_tenant_and_a_revoked_one_stops_after_the_cache_time() -> None:
    store = FakeKeyStore()
    issued = asyncio.run(issue_key(store, "acme"))
    client = keyed_app(store, auth_cache_s=0)

    assert client.get("/v1/whoami", headers=bearer(issued.key)).json() == {"tenant": "acme", "admin": False}
    asyncio.run(store.revoke(issued.record.key_id))
    refused = client.get("/v1/whoami", headers=bearer(issued.key))
    assert refused.status_code == 401
    assert refused.headers["WWW-Authenticate"].startswith("Bearer") and 'error="invalid_token"' in refused.headers[
        "WWW-Authenticate"]


def test_keys_are_looked_up_once_per_cache_time() -> None:
    store = FakeKeyStore()
    issued = asyncio.run(issue_key(store, "acme"))
    client = keyed_app(store, auth_cache_s=60)
    for _ in range(5):
        assert client.get("/v1/whoami", headers=bearer(issued.key)).status_code == 200
    assert store.reads == 1


def test_a_key_over_its_budget_gets_429_with_retry_after() -> None:
    store = FakeKeyStore()
    first, second = (asyncio.run(issue_key(store, t)) for t in ("acme", "globex"))
    client = keyed_app(store, rate_limit_per_s=0.01, rate_limit_burst=2)
    assert [client.get("/v1/whoami", headers=bearer(first.key)).status_code for _ in range(3)] == [200, 200, 429]
    limited = client.get("/v1/whoami", headers=bearer(first.key))
    assert limited.status_code == 429 and int(limited.headers["Retry-After"]) >= 1
    assert client.get("/v1/whoami", headers=bearer(second.key)).status_code == 200  # its own budget
    assert client.get("/healthz").status_code == 200  # probes are not counted


def random_keys(n: int) -> list[str]:
    """Well-formed keys nobody issued."""
    return [f"trk_{k:012x}_{'A' * 43}" for k in range(1, n + 1)]


def test_a_flood_of_guessed_keys_gets_429_from_its_address_and_costs_the_store_only_the_burst() -> None:
    store = FakeKeyStore()
    issued = asyncio.run(issue_key(store, "acme"))
    client = keyed_app(store, auth_failures_per_s=0.01, auth_failure_burst=20, auth_cache_s=60)
    assert client.get("/v1/whoami", headers=bearer(issued.key)).status_code == 200
    answers = [client.get("/v1/whoami", headers=bearer(key)).status_code for key in random_keys(1000)]
    assert answers[:20] == [401] * 20 and set(answers[20:]) == {429}
    assert store.reads == 1 + 20  # the valid key once, then the burst of guesses; none after
    limited = client.get("/v1/whoami", headers=bearer(random_keys(1)[0]))
    assert int(limited.headers["Retry-After"]) >= 1 and "not valid" in limited.json()["detail"]
    # Another address is not held back, and its valid key is still cached.
    other = TestClient(client.app, client=("203.0.113.9", 50000))
    assert other.get("/v1/whoami", headers=bearer(issued.key)).json()["tenant"] == "acme"
    assert store.reads == 21


def test_unknown_key_ids_never_push_a_key_in_use_out_of_the_cache() -> None:
    store = FakeKeyStore()
    issued = asyncio.run(issue_key(store, "acme"))
    client = keyed_app(store, auth_failures_per_s=0, auth_cache_s=60)
    keys = KeyCache(lambda: store, 60, max_known=5, max_unknown=50)
    client.app.state.authenticator.keys = keys  # type: ignore[attr-defined]
    assert client.get("/v1/whoami", headers=bearer(issued.key)).status_code == 200
    for key in random_keys(200):
        assert client.get("/v1/whoami", headers=bearer(key)).status_code == 401
    assert len(keys._unknown) == 50  # the guesses' memory is bounded
    reads = store.reads
    assert client.get("/v1/whoami", headers=bearer(issued.key)).status_code == 200
    assert store.reads == reads  # still cached
    assert client.get("/v1/whoami", headers=bearer(random_keys(200)[-1])).status_code == 401
    assert store.reads == reads  # a guess asked again is answered from the cache too
    assert client.get("/v1/whoami", headers=bearer(random_keys(200)[0])).status_code == 401
    assert store.reads == reads + 1  # the oldest guess was dropped past the bound


def test_the_known_keys_are_bounded_too_the_least_recently_used_dropped() -> None:
    store = FakeKeyStore()
    issued = [asyncio.run(issue_key(store, "acme")) for _ in range(4)]
    client = keyed_app(store, auth_failures_per_s=0, auth_cache_s=60)
    client.app.state.authenticator.keys = KeyCache(lambda: store, 60, max_known=2)  # type: ignore[attr-defined]
    for key in (issued[0], issued[1], issued[0], issued[2]):  # issued[1] is the least recently used
        assert client.get("/v1/whoami", headers=bearer(key.key)).status_code == 200
    reads = store.reads
    assert client.get("/v1/whoami", headers=bearer(issued[0].key)).status_code == 200
    assert store.reads == reads
    assert client.get("/v1/whoami", headers=bearer(issued[1].key)).status_code == 200
    assert store.reads == reads + 1


class SlowKeyStore(FakeKeyStore):
    """A store whose reads take a while, so that requests overlap as they do under load."""

    async def get(self, key_id: str) -> ApiKeyRecord | None:
        await asyncio.sleep(0.01)
        return await super().get(key_id)


def credentials(key: str) -> HTTPAuthorizationCredentials:
    return HTTPAuthorizationCredentials(scheme="Bearer", credentials=key)


async def answer(authenticator: Authenticator, key: str, address: str = "198.51.100.7") -> int:
    try:
        await authenticator.caller("/v1/whoami", credentials(key), address)
    except HTTPException as exc:
        return exc.status_code
    return 200


async def test_concurrent_guesses_cost_the_store_only_the_burst() -> None:
    # All at once: none has failed yet when the others arrive, so each must pay before its read.
    store = SlowKeyStore()
    authenticator = Authenticator(Settings(auth_failures_per_s=0.01, auth_failure_burst=20), lambda: store)
    answers = await asyncio.gather(*(answer(authenticator, key) for key in random_keys(500)))
    assert store.reads == 20
    assert sorted(answers) == [401] * 20 + [429] * 480


async def test_valid_keys_looked_up_give_their_budget_back_and_concurrent_requests_share_a_read() -> None:
    store = SlowKeyStore()
    issued = [await issue_key(store, "acme") for _ in range(50)]
    authenticator = Authenticator(Settings(auth_failures_per_s=0.01, auth_failure_burst=5, rate_limit_per_s=0),
                                  lambda: store)
    # From one address whose budget is 5: 5 keys never looked up, 10 requests of each at once...
    answers = await asyncio.gather(*(answer(authenticator, key.key) for key in issued[:5] for _ in range(10)))
    assert set(answers) == {200}
    assert store.reads == 5  # one read per key, shared by its concurrent requests
    # ... then 45 more keys one after another: each look-up's cost came back when the key proved valid.
    assert [await answer(authenticator, key.key) for key in issued[5:]] == [200] * 45
    # The budget bounds the look-ups in flight from one address: a sixth new key at once waits.
    fresh = [await issue_key(store, "acme") for _ in range(6)]
    assert sorted(await asyncio.gather(*(answer(authenticator, key.key) for key in fresh))) == [200] * 5 + [429]


async def test_an_address_out_of_budget_is_refused_a_look_up_but_not_a_key_already_held() -> None:
    store = FakeKeyStore()
    held, new = await issue_key(store, "acme"), await issue_key(store, "acme")
    authenticator = Authenticator(Settings(auth_failures_per_s=0.01, auth_failure_burst=3), lambda: store)
    assert await answer(authenticator, held.key) == 200
    assert [await answer(authenticator, key) for key in random_keys(4)] == [401, 401, 401, 429]
    reads = store.reads
    assert await answer(authenticator, held.key) == 200  # held: no read, nothing to limit
    assert await answer(authenticator, new.key) == 429  # would cost a read
    assert await answer(authenticator, "not a key") == 429
    assert store.reads == reads
    assert await answer(authenticator, new.key, address="203.0.113.9") == 200  # another address


class DownKeyStore(FakeKeyStore):
    async def get(self, key_id: str) -> ApiKeyRecord | None:
        raise ConnectionError("the store is down")


async def test_a_look_up_the_store_failed_costs_the_address_nothing() -> None:
    authenticator = Authenticator(Settings(auth_failures_per_s=0.01, auth_failure_burst=2), lambda: DownKeyStore())
    for key in random_keys(5):
        with pytest.raises(ConnectionError):
            await authenticator.caller("/v1/whoami", credentials(key), "198.51.100.7")
    assert authenticator.failures is not None and authenticator.failures.wait("198.51.100.7") == 0.0


def test_x_forwarded_for_is_ignored_unless_the_peer_is_a_trusted_proxy() -> None:
    store = FakeKeyStore()
    guesses = random_keys(30)
    spoofed = keyed_app(store, auth_failures_per_s=0.01, auth_failure_burst=10)
    answers = [spoofed.get("/v1/whoami", headers={**bearer(key), "X-Forwarded-For": f"192.0.2.{n}"}).status_code
               for n, key in enumerate(guesses)]
    assert answers == [401] * 10 + [429] * 20  # one budget: the TCP peer's

    proxied = keyed_app(store, auth_failures_per_s=0.01, auth_failure_burst=10, trusted_proxies="10.0.0.0/8",
                        peer="10.1.2.3")
    answers = [proxied.get("/v1/whoami", headers={**bearer(key), "X-Forwarded-For": f"192.0.2.{n}, 10.9.9.9"})
               .status_code for n, key in enumerate(guesses)]
    assert answers == [401] * 30  # each client behind the proxy has its own budget
    one_client = [proxied.get("/v1/whoami", headers={**bearer(key), "X-Forwarded-For": "192.0.2.200"}).status_code
                  for key in guesses]
    assert one_client == [401] * 10 + [429] * 20


def test_trusted_proxies_must_be_addresses_or_networks() -> None:
    assert Settings(trusted_proxies="10.0.0.0/8, 192.0.2.1,fd00::/8").trusted_proxies
    for bad in ("*", "proxy.internal", "10.0.0.0/33"):
        with pytest.raises(ValidationError, match="TREERAG_TRUSTED_PROXIES"):
            Settings(trusted_proxies=bad)


def test_request_budgets_are_kept_for_a_bounded_number_of_keys() -> None:
    clock = Clock()
    limiter = RateLimiter(rate_per_s=1.0, burst=1, clock=clock, max_tracked=3)
    for key in ("a", "b", "c", "d", "e"):
        assert limiter.take(key) == 0.0
    assert len(limiter) == 3
    assert limiter.take("e") > 0  # the latest are kept
    assert limiter.take("a") == 0.0  # the oldest dropped: a fresh budget


def test_auth_off_calls_everyone_the_configured_tenant() -> None:
    client = keyed_app(FakeKeyStore(), auth="off", tenant="solo")
    assert client.get("/v1/whoami").json() == {"tenant": "solo", "admin": True}


def test_auth_is_on_unless_configured_off() -> None:
    assert Settings().auth == "on"


# Guessed keys unlimited per address: every route below is tried with one from the same client.
GATEWAY = create_app(Settings(kafka_bootstrap="127.0.0.1:1", mongo_url="mongodb://127.0.0.1:1/",
                              auth_failures_per_s=0))
# Every API route, from the OpenAPI schema (it lists the routes of included routers too).
ROUTES = sorted((method.upper(), path) for path, item in GATEWAY.openapi()["paths"].items() for method in item)
PAGES = ["/", "/ask", "/pipeline", "/documents/0123456789abcdef", "/docs", "/redoc", "/static/css/app.css",
         "/openapi.json"]


def concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", lambda m: "1" if m.group(0) == "{number}" else "0123456789abcdef", path)


def test_the_schema_lists_the_routes_of_the_included_routers() -> None:
    paths = {path for _, path in ROUTES}
    assert {"/v1/pipeline", "/v1/documents/{doc_id}/pages/{number}/image", "/v1/query", "/metrics"} <= paths


@pytest.mark.parametrize(("method", "path"), [r for r in ROUTES if r[1] not in PUBLIC_ROUTES])
def test_every_route_but_the_probes_answers_401_without_a_valid_key(method: str, path: str) -> None:
    # No backend runs: a route that got past the key check would answer 503 or 422 instead.
    client = TestClient(GATEWAY, base_url="http://127.0.0.1:8000")
    for headers in ({}, {"Authorization": "Bearer trk_not_a_key"}, {"Authorization": "Basic dXNlcjpwYXNz"}):
        response = client.request(method, concrete(path), headers=headers)
        assert response.status_code == 401, (headers, response.text)
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_only_the_probes_and_sign_in_are_public_api_routes() -> None:
    # Sign-in's credential is the provider's code or refresh token, which the provider checks.
    assert {path for _, path in ROUTES if path in PUBLIC_ROUTES} == {
        "/healthz", "/readyz", "/v1/auth/config", "/v1/auth/token", "/v1/auth/refresh"}


@pytest.mark.parametrize("path", ["/healthz", *PAGES])
def test_the_probes_and_the_pages_need_no_key(path: str) -> None:
    response = TestClient(GATEWAY, base_url="http://127.0.0.1:8000").get(path)
    assert response.status_code == 200, response.text
