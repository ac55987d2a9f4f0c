"""A real OpenID Connect provider process for the sign-in tests: oidc-provider-mock on a free
port, with users whose claims the test gives. `sign_in` runs the Authorization Code flow with
PKCE as a browser would (the provider's sign-in form posted with the user's `sub`)."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx

CLIENT_ID = "treerag-web"
CLIENT_SECRET = "any"  # the provider accepts any secret for any client id


@dataclass(frozen=True)
class RunningProvider:
    issuer: str

    def discovery(self) -> dict[str, Any]:
        body: dict[str, Any] = httpx.get(f"{self.issuer}/.well-known/openid-configuration").json()
        return body

    def jwks(self) -> dict[str, Any]:
        body: dict[str, Any] = httpx.get(self.discovery()["jwks_uri"]).json()
        return body

    def sign_in(self, sub: str, client_id: str = CLIENT_ID,
                redirect_uri: str = "http://127.0.0.1:8000/signin") -> dict[str, Any]:
        """The token response for `sub` (id_token, access_token, refresh_token, expires_in)."""
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        config = self.discovery()
        login = httpx.post(config["authorization_endpoint"], data={"sub": sub}, params={
            "client_id": client_id, "redirect_uri": redirect_uri, "response_type": "code", "scope": "openid",
            "state": "s", "code_challenge": challenge, "code_challenge_method": "S256"})
        code = parse_qs(urlparse(login.headers["location"]).query)["code"][0]
        tokens: dict[str, Any] = httpx.post(config["token_endpoint"], data={
            "grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri, "code_verifier": verifier,
        }, auth=(client_id, CLIENT_SECRET)).raise_for_status().json()
        return tokens


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def oidc_provider(users: Mapping[str, Mapping[str, Any]], token_max_age_s: int = 3600) -> Iterator[RunningProvider]:
    port = _free_port()
    args = [sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1", "--port", str(port),
            "--token-max-age", str(token_max_age_s)]
    for sub, claims in users.items():
        args += ["--user-claims", json.dumps({"sub": sub, **claims})]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    provider = RunningProvider(f"http://127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                provider.discovery()
                break
            except httpx.HTTPError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the OIDC provider did not start: {process.stderr.read() if process.stderr else ''}"
                                       ) from None
                time.sleep(0.1)
        yield provider
    finally:
        process.terminate()
        process.wait(10)
