"""`/v1/keys`: an admin makes, lists and revokes their tenant's keys; a key is shown once and
works at once, a revoked one is refused at once, another tenant's keys are out of reach, and
no one below admin may manage keys."""

from __future__ import annotations

import asyncio

from services.gateway.errors import ErrorBody
from shared.app.api_keys import issue_key
from shared.settings import Settings
from tests.support.gateway.fake_gateway import FakeGateway

SETTINGS = Settings(auth="on", rate_limit_per_s=0, kafka_bootstrap="127.0.0.1:1", mongo_url="mongodb://127.0.0.1:1/")


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_an_admin_makes_lists_and_revokes_the_tenants_keys() -> None:
    fake = FakeGateway(settings=SETTINGS)
    admin = asyncio.run(issue_key(fake.keys, SETTINGS.tenant, role="admin")).key
    other = asyncio.run(issue_key(fake.keys, "globex", role="admin"))
    with fake.client() as client:
        made = client.post("/v1/keys", headers=bearer(admin), json={"role": "reader"})
        assert made.status_code == 201, made.text
        body = made.json()
        assert body["role"] == "reader" and body["tenant"] == SETTINGS.tenant and body["key"].startswith("trk_")
        reader = body["key"]
        # It works at once, with its role.
        assert client.get("/v1/documents", headers=bearer(reader)).status_code == 200
        upload = client.post("/v1/documents", headers=bearer(reader), files={"file": ("a.md", b"# A\n\ntext\n")})
        assert upload.status_code == 403

        listed = client.get("/v1/keys", headers=bearer(admin))
        assert listed.status_code == 200
        ids = [k["key_id"] for k in listed.json()]
        assert body["key_id"] in ids and other.record.key_id not in ids  # another tenant's keys are not listed
        assert all("key" not in k and "secret_sha256" not in k for k in listed.json())
        assert reader not in listed.text and fake.keys.records[body["key_id"]].secret_sha256 not in listed.text

        revoked = client.delete(f"/v1/keys/{body['key_id']}", headers=bearer(admin))
        assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
        assert client.get("/v1/documents", headers=bearer(reader)).status_code == 401  # refused at once
        assert client.delete(f"/v1/keys/{body['key_id']}", headers=bearer(admin)).status_code == 200  # again: no change

        foreign = client.delete(f"/v1/keys/{other.record.key_id}", headers=bearer(admin))
        assert foreign.status_code == 404
        assert fake.keys.records[other.record.key_id].revoked_at is None
        assert client.get("/v1/documents", headers=bearer(other.key)).status_code == 200


def test_only_an_admin_manages_keys_and_bad_requests_say_why() -> None:
    fake = FakeGateway(settings=SETTINGS)
    editor = asyncio.run(issue_key(fake.keys, SETTINGS.tenant, role="editor")).key
    admin = asyncio.run(issue_key(fake.keys, SETTINGS.tenant, role="admin")).key
    with fake.client() as client:
        for method, path in (("GET", "/v1/keys"), ("POST", "/v1/keys"), ("DELETE", "/v1/keys/0123456789ab")):
            refused = client.request(method, path, headers=bearer(editor), json={"role": "admin"})
            assert refused.status_code == 403, (method, path)
            assert "admin role" in ErrorBody.model_validate(refused.json()).error.message
        assert client.post("/v1/keys", headers=bearer(admin), json={"role": "owner"}).status_code == 422
        assert client.delete("/v1/keys/not-an-id", headers=bearer(admin)).status_code == 422
        assert client.delete("/v1/keys/0123456789ab", headers=bearer(admin)).status_code == 404
    assert len(fake.keys.records) == 2  # nothing was made
