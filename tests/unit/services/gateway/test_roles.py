"""Roles: a reader asks and views, an editor also uploads and deletes, an admin also reads the
operations figures; a key made before roles keeps what it could do; a denied role gets 403
naming the role needed, and the schema lists that 403."""

from __future__ import annotations

import asyncio

import pytest

from services.gateway.errors import ErrorBody
from services.gateway.keys import main
from services.gateway.roles import Role, deletion_refusal, needed_role, refusal, role_of_key
from shared.app.api_keys import issue_key, new_key
from shared.model.api_keys import ApiKeyRecord
from shared.settings import Settings
from tests.support.gateway.fake_gateway import FakeGateway

SETTINGS = Settings(auth="on", rate_limit_per_s=0, kafka_bootstrap="127.0.0.1:1", mongo_url="mongodb://127.0.0.1:1/")


def test_keys_made_before_roles_keep_what_they_could_do() -> None:
    old = new_key("acme").record.model_dump()
    old.pop("role")
    assert role_of_key(ApiKeyRecord.model_validate(old)) == Role.editor
    old["admin"] = True
    assert role_of_key(ApiKeyRecord.model_validate(old)) == Role.admin
    assert role_of_key(new_key("acme", role="reader").record) == Role.reader


def test_a_role_includes_those_below_it_and_a_refusal_names_the_role_needed() -> None:
    assert refusal(Role.admin, Role.editor) is None and refusal(Role.editor, Role.editor) is None
    reason = refusal(Role.reader, Role.editor)
    assert reason is not None and "editor role" in reason and "--role editor" in reason
    assert needed_role("DELETE", "/v1/documents/{doc_id}") == Role.editor
    assert needed_role("GET", "/v1/documents/{doc_id}") == Role.reader
    assert needed_role("GET", "/metrics") == Role.admin


def test_each_role_reaches_only_its_routes_and_a_denied_one_gets_403_naming_the_role() -> None:
    fake = FakeGateway(settings=SETTINGS)
    keys = {role: asyncio.run(issue_key(fake.keys, SETTINGS.tenant, role=role)).key
            for role in ("reader", "editor", "admin")}
    with fake.client() as client:
        def as_(role: str) -> dict[str, str]:
            return {"Authorization": f"Bearer {keys[role]}"}

        assert client.get("/v1/documents", headers=as_("reader")).status_code == 200
        upload = client.post("/v1/documents", headers=as_("reader"), files={"file": ("a.md", b"# A\n\ntext\n")})
        assert upload.status_code == 403
        body = ErrorBody.model_validate(upload.json())
        assert body.error.code == "forbidden" and "editor role" in body.error.message
        assert client.delete("/v1/documents/x1", headers=as_("reader")).status_code == 403
        assert client.post("/v1/documents", headers=as_("editor"),
                           files={"file": ("a.md", b"# A\n\ntext\n")}).status_code == 202
        metrics = client.get("/metrics", headers=as_("editor"))
        assert metrics.status_code == 403 and "admin role" in ErrorBody.model_validate(metrics.json()).error.message
        assert client.get("/metrics", headers=as_("admin")).status_code == 200


def test_the_schema_lists_403_exactly_on_the_routes_above_reader() -> None:
    schema = FakeGateway(settings=SETTINGS).app().openapi()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            above_reader = needed_role(method.upper(), path) > Role.reader
            if above_reader:
                assert "403" in operation["responses"], (method, path)
    assert "403" not in schema["paths"]["/v1/query"]["post"]["responses"]


def test_the_cli_makes_a_key_with_a_role_and_lists_it(tmp_path: pytest.TempPathFactory,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--store", str(tmp_path), "create", "--tenant", "acme", "--role", "reader"]) == 0
    assert "created reader key" in capsys.readouterr().err
    assert main(["--store", str(tmp_path), "list"]) == 0
    assert "reader" in capsys.readouterr().out


def test_an_editor_deletes_what_they_uploaded_and_an_admin_deletes_anything_of_the_tenant() -> None:
    fake = FakeGateway(settings=SETTINGS)
    keys = {name: asyncio.run(issue_key(fake.keys, SETTINGS.tenant, role=role)).key
            for name, role in (("ann", "editor"), ("bob", "editor"), ("admin", "admin"))}
    with fake.client() as client:
        def as_(name: str) -> dict[str, str]:
            return {"Authorization": f"Bearer {keys[name]}"}

        def upload(name: str, text: bytes) -> str:
            accepted = client.post("/v1/documents", headers=as_(name), files={"file": ("notes.md", text)})
            assert accepted.status_code == 202
            return str(accepted.json()["doc_id"])

        anns, bobs = upload("ann", b"# Ann\n\nvalves\n"), upload("bob", b"# Bob\n\npumps\n")
        refused = client.delete(f"/v1/documents/{bobs}", headers=as_("ann"))
        assert refused.status_code == 403
        assert "only the documents they uploaded" in ErrorBody.model_validate(refused.json()).error.message
        assert client.get(f"/v1/documents/{bobs}", headers=as_("ann")).status_code == 200  # nothing happened to it
        # Uploading the same bytes again does not make the document Ann's.
        assert upload("ann", b"# Bob\n\npumps\n") == bobs
        assert client.delete(f"/v1/documents/{bobs}", headers=as_("ann")).status_code == 403

        assert client.delete(f"/v1/documents/{anns}", headers=as_("ann")).status_code == 200
        assert client.delete(f"/v1/documents/{bobs}", headers=as_("admin")).status_code == 200


def test_a_document_with_no_recorded_uploader_is_deleted_by_an_admin_only() -> None:
    assert deletion_refusal(Role.admin, "key:k1", None) is None
    reason = deletion_refusal(Role.editor, "key:k1", None)
    assert reason is not None and "only an admin" in reason
    assert deletion_refusal(Role.editor, "user:alice", "user:alice") is None
    assert deletion_refusal(Role.editor, None, None) is not None  # no caller to match
    below = deletion_refusal(Role.reader, "key:k1", "key:k1")
    assert below is not None and "editor role" in below
