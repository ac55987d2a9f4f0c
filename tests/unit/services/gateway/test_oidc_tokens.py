"""Bearer JWTs of a real OIDC provider (a process started here): a signed-in user calls as the
tenant and role its claims map to; a token for another audience, an expired one or a forged
one gets 401; a role too low gets 403; another tenant's documents are not found; API keys keep
working beside sign-in."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from joserfc import jwt
from joserfc.jwk import RSAKey

from services.gateway.errors import ErrorBody
from shared.app.api_keys import issue_key
from shared.model.documents import DocumentRecord, DocumentStatus
from shared.settings import Settings
from tests.support.gateway.fake_gateway import FakeGateway
from tests.support.gateway.oidc_provider import CLIENT_ID, CLIENT_SECRET, RunningProvider, oidc_provider

USERS = {
    "ana": {"org": "acme", "groups": ["treerag-editors"]},
    "ivo": {"org": "acme", "groups": ["treerag-editors"]},
    "rui": {"org": "acme", "groups": ["staff"]},
    "eve": {"org": "globex", "groups": ["treerag-editors"]},
    "nobody": {"org": "acme", "groups": []},
}


@pytest.fixture(scope="module")
def provider() -> Iterator[RunningProvider]:
    with oidc_provider(USERS) as running:
        yield running


def settings(provider: RunningProvider, **extra: object) -> Settings:
    return Settings(auth="on", rate_limit_per_s=0, kafka_bootstrap="127.0.0.1:1", mongo_url="mongodb://127.0.0.1:1/",
                    oidc_issuer=provider.issuer, oidc_client_id=CLIENT_ID, oidc_client_secret=CLIENT_SECRET,
                    oidc_tenant_claim="org",
                    oidc_roles="treerag-admins=admin,treerag-editors=editor,staff=reader", **extra)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def document(doc_id: str, tenant: str) -> DocumentRecord:
    return DocumentRecord(doc_id=doc_id, file_name=f"{doc_id}.md", tenant=tenant, status=DocumentStatus.READY)


def test_a_signed_in_user_calls_as_its_tenant_and_role(provider: RunningProvider) -> None:
    fake = FakeGateway(settings=settings(provider))
    asyncio.run(fake.store.put_document(document("d-acme", "acme")))
    asyncio.run(fake.store.put_document(document("d-globex", "globex")))
    ana = provider.sign_in("ana")["id_token"]
    rui = provider.sign_in("rui")["id_token"]
    eve = provider.sign_in("eve")["id_token"]
    with fake.client() as client:
        listed = client.get("/v1/documents", headers=bearer(ana))
        assert listed.status_code == 200 and [d["doc_id"] for d in listed.json()] == ["d-acme"]
        assert client.get("/v1/documents/d-acme", headers=bearer(ana)).status_code == 200
        # Another tenant's document is not found, as one that does not exist.
        assert client.get("/v1/documents/d-acme", headers=bearer(eve)).status_code == 404
        assert client.get("/v1/documents/none", headers=bearer(eve)).status_code == 404
        # A reader views but may not upload or delete; the 403 names the role needed.
        assert client.get("/v1/documents/d-acme", headers=bearer(rui)).status_code == 200
        denied = client.delete("/v1/documents/d-acme", headers=bearer(rui))
        assert denied.status_code == 403
        assert "editor role" in ErrorBody.model_validate(denied.json()).error.message
        assert client.post("/v1/documents", headers=bearer(ana),
                           files={"file": ("a.md", b"# A\n\ntext\n")}).status_code == 202


def test_a_signed_in_editor_deletes_their_own_upload_and_not_another_editors(provider: RunningProvider) -> None:
    fake = FakeGateway(settings=settings(provider))
    ana = provider.sign_in("ana")["id_token"]
    ivo = provider.sign_in("ivo")["id_token"]
    with fake.client() as client:
        uploaded = client.post("/v1/documents", headers=bearer(ana), files={"file": ("a.md", b"# Ana\n\nvalves\n")})
        assert uploaded.status_code == 202
        doc_id = uploaded.json()["doc_id"]
        refused = client.delete(f"/v1/documents/{doc_id}", headers=bearer(ivo))
        assert refused.status_code == 403 and "they uploaded" in ErrorBody.model_validate(refused.json()).error.message
        assert client.delete(f"/v1/documents/{doc_id}", headers=bearer(ana)).status_code == 200


def test_a_user_in_no_mapped_group_gets_403_saying_so(provider: RunningProvider) -> None:
    with FakeGateway(settings=settings(provider)).client() as client:
        refused = client.get("/v1/documents", headers=bearer(provider.sign_in("nobody")["id_token"]))
        assert refused.status_code == 403 and "no group mapped" in refused.json()["error"]["message"]


def test_a_token_for_another_audience_gets_401(provider: RunningProvider) -> None:
    other = provider.sign_in("ana", client_id="another-app")["id_token"]
    with FakeGateway(settings=settings(provider)).client() as client:
        refused = client.get("/v1/documents", headers=bearer(other))
        assert refused.status_code == 401 and 'error="invalid_token"' in refused.headers["WWW-Authenticate"]
        assert "not for this gateway" in refused.json()["error"]["message"]
    with FakeGateway(settings=settings(provider, oidc_audience=f"{CLIENT_ID},another-app")).client() as client:
        assert client.get("/v1/documents", headers=bearer(other)).status_code == 200


def test_a_token_signed_by_a_key_the_provider_does_not_publish_gets_401(provider: RunningProvider) -> None:
    stranger = RSAKey.generate_key(2048, parameters={"kid": "not-the-providers"}, private=True)
    now = int(time.time())
    forged = jwt.encode({"alg": "RS256", "kid": "not-the-providers"}, {
        "iss": provider.issuer, "aud": CLIENT_ID, "sub": "ana", "org": "acme", "groups": ["treerag-admins"],
        "iat": now, "exp": now + 600}, stranger)
    with FakeGateway(settings=settings(provider)).client() as client:
        assert client.get("/v1/documents", headers=bearer(forged)).status_code == 401


def test_an_expired_token_gets_401_and_a_refreshed_sign_in_works_again() -> None:
    with oidc_provider(USERS, token_max_age_s=5) as short:
        fake = FakeGateway(settings=settings(short, oidc_leeway_s=0))
        with fake.client() as client:
            tokens = short.sign_in("ana")
            assert client.get("/v1/documents", headers=bearer(tokens["id_token"])).status_code == 200
            expires_at = jwt.decode(tokens["id_token"], RSAKey.import_key(short.jwks()["keys"][0])).claims["exp"]
            time.sleep(max(0.0, expires_at - time.time() + 1.1))
            expired = client.get("/v1/documents", headers=bearer(tokens["id_token"]))
            assert expired.status_code == 401 and "expired" in expired.json()["error"]["message"]
            # The web app refreshes through the gateway, which redeems the refresh token.
            refreshed = client.post("/v1/auth/refresh", json={"refresh_token": tokens["refresh_token"]})
            assert refreshed.status_code == 200 and refreshed.json()["access_token"]


def test_api_keys_keep_working_beside_sign_in(provider: RunningProvider) -> None:
    fake = FakeGateway(settings=settings(provider))
    key = asyncio.run(issue_key(fake.keys, "acme", role="reader")).key
    with fake.client() as client:
        assert client.get("/v1/documents", headers=bearer(key)).status_code == 200
        assert client.post("/v1/documents", headers=bearer(key),
                           files={"file": ("a.md", b"# A\n\ntext\n")}).status_code == 403


def test_an_unreachable_provider_is_503_not_a_refusal() -> None:
    down = Settings(auth="on", kafka_bootstrap="127.0.0.1:1", mongo_url="mongodb://127.0.0.1:1/",
                    oidc_issuer="http://127.0.0.1:9", oidc_client_id=CLIENT_ID, oidc_roles="*=reader")
    token = jwt.encode({"alg": "RS256", "kid": "k"}, {"iss": "x"}, RSAKey.generate_key(2048, private=True))
    with FakeGateway(settings=down).client() as client:
        answer = client.get("/v1/documents", headers=bearer(token))
        assert answer.status_code == 503


def test_a_refresh_token_the_provider_refuses_is_400_saying_sign_in_again(provider: RunningProvider) -> None:
    with FakeGateway(settings=settings(provider)).client() as client:
        refused = client.post("/v1/auth/refresh", json={"refresh_token": "not-one-it-issued"})
        assert refused.status_code == 400 and "sign in again" in refused.json()["error"]["message"]


def test_refused_tokens_spend_the_addresss_budget_then_get_429(provider: RunningProvider) -> None:
    other = provider.sign_in("ana", client_id="another-app")["id_token"]
    with FakeGateway(settings=settings(provider, auth_failures_per_s=0.01, auth_failure_burst=3)).client() as client:
        answers = [client.get("/v1/documents", headers=bearer(other)).status_code for _ in range(5)]
        assert answers == [401, 401, 401, 429, 429]
