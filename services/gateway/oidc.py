"""Tokens of an OIDC provider, checked the way the provider publishes them: its discovery
document (`<issuer>/.well-known/openid-configuration`) names its signing keys (JWKS), and a
bearer JWT — an ID token or a JWT access token — is accepted when its signature verifies with
one of them and its issuer, audience and expiry hold.

The keys are reused for TREERAG_OIDC_JWKS_CACHE_S. A token signed with a key id we do not hold
refetches them (a provider rotating its keys), at most every REFETCH_S, so tokens with made-up
key ids cannot make the gateway hammer the provider; at most MAX_KEYS keys are kept.
The JOSE work is joserfc's (authlib's JOSE library, which replaces the deprecated authlib.jose).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from shared.adapters.logs import log_fields
from shared.settings import Settings

logger = logging.getLogger(__name__)

# Asymmetric algorithms only: a provider signs with its private key; an HMAC "signature" made
# with the public key as the secret must not pass.
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
REFETCH_S = 10.0
MAX_KEYS = 64
HTTP_TIMEOUT_S = 5.0


class TokenRefused(Exception):
    """The token is not one the provider issued for us, or no longer valid: the message says why
    (never the token)."""


class ProviderUnreachable(Exception):
    """The provider's discovery document or keys could not be read."""


@dataclass(frozen=True)
class Provider:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    end_session_endpoint: str | None = None


def looks_like_jwt(token: str) -> bool:
    return token.count(".") == 2 and token.startswith("ey")


def _header(token: str) -> dict[str, Any]:
    part = token.split(".", 1)[0]
    try:
        header = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    except ValueError as exc:
        raise TokenRefused("the bearer token is not a JWT") from exc
    if not isinstance(header, dict):
        raise TokenRefused("the bearer token is not a JWT")
    return header


class OidcVerifier:
    def __init__(self, settings: Settings, client: Callable[[], httpx.AsyncClient] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.issuer = settings.oidc_issuer.rstrip("/")
        self.audiences = [a.strip() for a in settings.oidc_audience.split(",") if a.strip()] or [
            settings.oidc_client_id]
        self.cache_s = settings.oidc_jwks_cache_s
        self.leeway_s = settings.oidc_leeway_s
        self.clock = clock
        self._client = client or (lambda: httpx.AsyncClient(timeout=HTTP_TIMEOUT_S))
        self._provider: Provider | None = None
        self._keys: KeySet | None = None
        self._fetched_at = float("-inf")
        self._lock = asyncio.Lock()

    async def _get_json(self, url: str) -> Mapping[str, Any]:
        try:
            async with self._client() as client:
                response = await client.get(url)
                response.raise_for_status()
                body = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ProviderUnreachable(f"the OIDC provider did not answer {url}: {type(exc).__name__}") from exc
        if not isinstance(body, dict):
            raise ProviderUnreachable(f"the OIDC provider's {url} is not a JSON object")
        return body

    async def provider(self) -> Provider:
        if self._provider is None:
            doc = await self._get_json(f"{self.issuer}/.well-known/openid-configuration")
            if str(doc.get("issuer", "")).rstrip("/") != self.issuer:
                raise ProviderUnreachable(f"the discovery document at {self.issuer} names issuer "
                                          f"{doc.get('issuer')!r}: set TREERAG_OIDC_ISSUER to the provider's issuer")
            self._provider = Provider(issuer=str(doc["issuer"]), authorization_endpoint=str(doc["authorization_endpoint"]),
                                      token_endpoint=str(doc["token_endpoint"]), jwks_uri=str(doc["jwks_uri"]),
                                      end_session_endpoint=doc.get("end_session_endpoint"))
        return self._provider

    async def _key_set(self, kid: str | None) -> KeySet:
        async with self._lock:
            now = self.clock()
            stale = now - self._fetched_at >= self.cache_s
            missing = self._keys is None or (kid is not None and not _holds(self._keys, kid))
            if stale or (missing and now - self._fetched_at >= REFETCH_S):
                provider = await self.provider()
                body = await self._get_json(provider.jwks_uri)
                keys = [k for k in body.get("keys", []) if isinstance(k, dict)][:MAX_KEYS]
                try:
                    self._keys = KeySet.import_key_set({"keys": keys})
                except (JoseError, ValueError) as exc:
                    raise ProviderUnreachable(f"the OIDC provider's keys at {provider.jwks_uri} do not parse") from exc
                self._fetched_at = now
                logger.info("oidc signing keys fetched", extra=log_fields(keys=len(keys)))
            if self._keys is None:
                raise ProviderUnreachable("the OIDC provider's keys are not known yet")
            return self._keys

    async def claims(self, token: str) -> dict[str, Any]:
        """The claims of a valid token; TokenRefused for any other."""
        header = _header(token)
        kid = header.get("kid") if isinstance(header.get("kid"), str) else None
        provider = await self.provider()
        keys = await self._key_set(kid)
        if kid is not None and not _holds(keys, kid):
            raise TokenRefused("the token is signed with a key the provider does not publish")
        try:
            decoded = jwt.decode(token, keys, algorithms=ALGORITHMS)
            jwt.JWTClaimsRegistry(
                leeway=self.leeway_s, iss={"essential": True, "value": provider.issuer},
                aud={"essential": True, "values": self.audiences}, exp={"essential": True},
            ).validate(decoded.claims)
        except JoseError as exc:
            raise TokenRefused(_reason(exc)) from exc
        return dict(decoded.claims)


def _holds(keys: KeySet, kid: str) -> bool:
    return any(key.kid == kid for key in keys.keys)


def _reason(exc: JoseError) -> str:
    name = type(exc).__name__
    if name == "ExpiredTokenError":
        return "the token has expired: refresh it or sign in again"
    if name in ("InvalidClaimError", "MissingClaimError"):
        return f"the token is not for this gateway ({exc.description}): check TREERAG_OIDC_AUDIENCE and the issuer"
    if name == "BadSignatureError":
        return "the token's signature does not verify with the provider's keys"
    return f"the token is not valid ({exc.error})"
