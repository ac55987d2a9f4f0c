"""Sign-in in Debian's Chromium: the web app's Sign in button runs the Authorization Code flow
with PKCE against a real OIDC provider process, the user lands back signed in and sees its
tenant's documents only, and the tab renews its tokens with the refresh token before expiry."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import time
from typing import Any
from urllib.parse import parse_qs, urlparse

from shared.model.documents import DocumentRecord, DocumentStatus
from shared.settings import Settings
from tests.support.browser import DESKTOP, Tab, launched
from tests.support.gateway.fake_gateway import FakeGateway, served
from tests.support.gateway.oidc_provider import CLIENT_ID, CLIENT_SECRET, oidc_provider

USERS = {"ana": {"org": "acme", "groups": ["treerag-editors"]}}


def test_sign_in_in_chromium_shows_the_tenants_documents_and_refreshes_before_expiry() -> None:
    with oidc_provider(USERS, token_max_age_s=16) as provider:
        fake = FakeGateway(settings=Settings(
            auth="on", rate_limit_per_s=0, kafka_bootstrap="127.0.0.1:1", mongo_url="mongodb://127.0.0.1:1/",
            oidc_issuer=provider.issuer, oidc_client_id=CLIENT_ID, oidc_client_secret=CLIENT_SECRET,
            oidc_tenant_claim="org", oidc_roles="treerag-editors=editor"))
        for doc_id, tenant in (("ours", "acme"), ("theirs", "globex")):
            asyncio.run(fake.store.put_document(DocumentRecord(
                doc_id=doc_id, file_name=f"{doc_id}-report.md", tenant=tenant, status=DocumentStatus.READY)))
        with served(fake.app()) as port, launched() as browser:
            tab = Tab(browser, DESKTOP)
            page = tab.page
            sent: list[Any] = []
            page.on("request", lambda request: sent.append(request))
            page.goto(f"http://127.0.0.1:{port}/")
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(re.compile(re.escape(provider.issuer)))
            page.fill("input[name=sub]", "ana")
            page.get_by_role("button", name="Authorize").click()
            page.wait_for_url(f"http://127.0.0.1:{port}/")
            page.get_by_text("ours-report.md").first.wait_for()
            assert page.get_by_text("theirs-report.md").count() == 0
            # PKCE as RFC 7636 has it (the provider here does not check it): the authorization
            # request carries the S256 challenge of the verifier the code is redeemed with.
            authorize = next(parse_qs(urlparse(r.url).query) for r in sent if r.url.startswith(provider.issuer)
                             and "code_challenge" in r.url)
            redeemed = next(json.loads(r.post_data) for r in sent if r.url.endswith("/v1/auth/token"))
            digest = hashlib.sha256(redeemed["code_verifier"].encode("ascii")).digest()
            assert authorize["code_challenge_method"] == ["S256"]
            assert authorize["code_challenge"] == [base64.urlsafe_b64encode(digest).rstrip(b"=").decode()]
            assert 43 <= len(redeemed["code_verifier"]) <= 128
            assert page.get_by_role("button", name="Sign out").is_visible()
            # 16 s tokens: the tab redeems its refresh token at half their remaining life.
            signed_in_at = time.monotonic()
            with page.expect_response(lambda r: r.url.endswith("/v1/auth/refresh"), timeout=20_000) as refreshed:
                pass
            assert refreshed.value.status == 200 and time.monotonic() - signed_in_at > 3
            # Still signed in after the renewal: the documents load again with the kept token.
            page.reload()
            page.get_by_text("ours-report.md").first.wait_for()
            assert tab.problems == [], tab.problems
            tab.close()
