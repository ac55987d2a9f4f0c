"""The provider's signing keys: fetched once and reused, refetched for a key id we do not hold
(a rotation) but at most every REFETCH_S, so made-up key ids cannot flood the provider."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import RSAKey

from services.gateway.oidc import REFETCH_S, OidcVerifier, TokenRefused
from shared.settings import Settings

ISSUER = "https://id.example.com"


class Provider:
    def __init__(self) -> None:
        self.keys = [RSAKey.generate_key(2048, parameters={"kid": "one"}, private=True)]
        self.jwks_reads = 0

    def handle(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/.well-known/openid-configuration":
            return httpx.Response(200, json={"issuer": ISSUER, "authorization_endpoint": f"{ISSUER}/auth",
                                             "token_endpoint": f"{ISSUER}/token", "jwks_uri": f"{ISSUER}/jwks"})
        self.jwks_reads += 1
        return httpx.Response(200, json={"keys": [k.as_dict(private=False) for k in self.keys]})

    def token(self, key: RSAKey) -> str:
        now = int(time.time())
        return jwt.encode({"alg": "RS256", "kid": key.kid}, {"iss": ISSUER, "aud": "app", "sub": "ana",
                                                            "iat": now, "exp": now + 300}, key)


def test_keys_are_reused_and_an_unknown_key_id_refetches_them_at_most_every_refetch_s() -> None:
    provider = Provider()
    now = [1000.0]
    verifier = OidcVerifier(Settings(oidc_issuer=ISSUER, oidc_client_id="app"),
                            client=lambda: httpx.AsyncClient(transport=httpx.MockTransport(provider.handle)),
                            clock=lambda: now[0])

    async def run() -> None:
        for _ in range(3):
            assert (await verifier.claims(provider.token(provider.keys[0])))["sub"] == "ana"
        assert provider.jwks_reads == 1
        rotated = RSAKey.generate_key(2048, parameters={"kid": "two"}, private=True)
        made_up = RSAKey.generate_key(2048, parameters={"kid": "made-up"}, private=True)
        now[0] += REFETCH_S
        for _ in range(5):
            with pytest.raises(TokenRefused, match="does not publish"):
                await verifier.claims(provider.token(made_up))
        assert provider.jwks_reads == 2  # one refetch for the burst of unknown ids
        provider.keys.append(rotated)
        now[0] += REFETCH_S
        assert (await verifier.claims(provider.token(rotated)))["sub"] == "ana"
        assert provider.jwks_reads == 3

    asyncio.run(run())
