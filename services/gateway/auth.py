"""Who is calling: `Authorization: Bearer <API key>` on every route but the public ones, and a
request budget per key.

With TREERAG_AUTH=on (the default) a request without a valid key is answered 401 with
`WWW-Authenticate: Bearer`; a key over its budget 429 with `Retry-After`. A request whose key
the gateway must look up in the store, or whose key is not valid, first takes from a budget of
its client address (TREERAG_AUTH_FAILURES_PER_S, TREERAG_AUTH_FAILURE_BURST), and one found
valid gets it back: past the burst an address sending keys that are not valid gets 429 before
any store read, so guessing keys costs the store at most the burst, however fast or concurrent
the guesses. Keys already held as valid cost nothing and are never held back. The client address
is the TCP peer's, or behind TREERAG_TRUSTED_PROXIES the one they forward. The caller's tenant
scopes everything the routes read and write (see docs/services.md, Security). With
TREERAG_AUTH=off every request is the TREERAG_TENANT tenant, admin, without limits: for a
gateway that only its own machine can reach.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, FastAPI, HTTPException, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from services.gateway.key_cache import KeyCache
from services.gateway.oidc import TokenRefused, looks_like_jwt
from services.gateway.rate_limit import RateLimiter, retry_after_header
from services.gateway.roles import Role, role_of_key
from services.gateway.sign_in import SignIn
from shared.adapters.logs import log_fields
from shared.app.api_keys import accepts, parse_key
from shared.model.api_keys import ApiKeyRecord
from shared.ports.api_keys import KeyLookup
from shared.settings import Settings

logger = logging.getLogger(__name__)

# Routes anyone may call: probes, and the web app's pages, which hold no data (their scripts
# fetch it with the key the user entered). Every other route asks for a key.
PUBLIC_ROUTES = frozenset({
    "/healthz", "/readyz",
    "/", "/ask", "/pipeline", "/documents/{doc_id}", "/docs", "/redoc",
    # Sign-in itself: the provider's code or refresh token is the credential.
    "/signin", "/v1/auth/config", "/v1/auth/token", "/v1/auth/refresh",
})
REALM = 'Bearer realm="treerag"'
# A request that names no client address (a test client, a Unix socket) counts as this one.
UNKNOWN_ADDRESS = "unknown"


@dataclass(frozen=True)
class Caller:
    tenant: str
    role: Role
    key_id: str | None = None  # None: TREERAG_AUTH=off, or a signed-in user
    subject: str | None = None  # a signed-in user's `sub`

    @property
    def admin(self) -> bool:
        return self.role >= Role.admin

    @property
    def principal(self) -> str | None:
        """Who calls, as a document's `uploaded_by` records it: the key or the signed-in user;
        None for the anonymous caller of a gateway with TREERAG_AUTH=off."""
        if self.key_id is not None:
            return f"key:{self.key_id}"
        return f"user:{self.subject}" if self.subject is not None else None


def unauthorized(detail: str, *, invalid: bool) -> HTTPException:
    challenge = f'{REALM}, error="invalid_token"' if invalid else REALM
    return HTTPException(401, detail, headers={"WWW-Authenticate": challenge})


class Authenticator:
    """Says who calls: the caller of a request with a valid key, the anonymous caller of a
    public route or of a gateway with TREERAG_AUTH=off."""

    def __init__(self, settings: Settings, store: Callable[[], KeyLookup]) -> None:
        self.enabled = settings.auth == "on"
        self.anonymous = Caller(tenant=settings.tenant, role=Role.admin)
        self.keys = KeyCache(store, settings.auth_cache_s)
        self.limiter = (RateLimiter(settings.rate_limit_per_s, settings.rate_limit_burst)
                        if settings.rate_limit_per_s > 0 else None)
        self.failures = (RateLimiter(settings.auth_failures_per_s, settings.auth_failure_burst)
                         if settings.auth_failures_per_s > 0 else None)
        self.sign_in = SignIn.configured(settings)  # None: API keys only

    async def caller(self, route_path: str | None, credentials: HTTPAuthorizationCredentials | None,
                     address: str = UNKNOWN_ADDRESS) -> Caller:
        if not self.enabled or route_path in PUBLIC_ROUTES:
            return self.anonymous
        if credentials is None:
            raise unauthorized("an API key is required: send `Authorization: Bearer <key>` "
                               "(`treerag keys create --tenant NAME` makes one)", invalid=False)
        if self.sign_in is not None and looks_like_jwt(credentials.credentials):
            return await self._signed_in(self.sign_in, credentials.credentials, address)
        record = await self._key(credentials.credentials, address)
        if self.limiter is not None and (wait_s := self.limiter.take(record.key_id)) > 0:
            logger.info("request over the key's rate limit", extra=log_fields(key_id=record.key_id))
            raise HTTPException(429, "too many requests for this API key; retry after the time in Retry-After",
                                headers={"Retry-After": retry_after_header(wait_s)})
        return Caller(tenant=record.tenant, role=role_of_key(record), key_id=record.key_id)

    async def _key(self, key: str, address: str) -> ApiKeyRecord:
        """The record of a valid key. A store read is paid from the address's budget before it
        is made (and given back when the key proves valid); a key that is not valid costs one."""
        parsed = parse_key(key)
        if parsed is None:
            self._spend(address)
            raise _invalid_key()
        key_id, secret = parsed
        paid = self.keys.held(key_id) is None and not self.keys.reading(key_id)
        if paid:
            self._spend(address)
        try:
            record = await self.keys.get(key_id)
        except Exception:
            if paid and self.failures is not None:
                self.failures.give_back(address)  # the store failed, not the key: no cost to the client
            raise
        if not accepts(record, secret):
            if not paid:
                self._spend(address)
            raise _invalid_key()
        if paid and self.failures is not None:
            self.failures.give_back(address)
        return record

    async def _signed_in(self, sign_in: SignIn, token: str, address: str) -> Caller:
        """A token of the OIDC provider: checked with its keys (no store read); a refused one
        costs the address one request of its budget, and an address with none left is not heard."""
        if self.failures is not None and (wait_s := self.failures.wait(address)) > 0:
            raise _address_limited(wait_s)
        try:
            tenant, role, subject = await sign_in.identify(token)
        except TokenRefused as exc:
            self._spend(address)
            raise unauthorized(str(exc), invalid=True) from exc
        return Caller(tenant=tenant, role=role, subject=subject)

    def _spend(self, address: str) -> None:
        """Take one request from the address's budget; 429 when it has none left (not logged:
        a flood would write a line per request; the 429s are in the HTTP metrics)."""
        if self.failures is not None and (wait_s := self.failures.take(address)) > 0:
            raise _address_limited(wait_s)


def _invalid_key() -> HTTPException:
    return unauthorized("the API key is not valid (unknown, revoked or mistyped)", invalid=True)


def _address_limited(wait_s: float) -> HTTPException:
    return HTTPException(429, "too many requests with keys that are not valid from this address; retry after the "
                              "time in Retry-After with a valid key",
                         headers={"Retry-After": retry_after_header(wait_s)})


def install_auth(app: FastAPI, settings: Settings, store: Callable[[], KeyLookup]) -> None:
    """Give the app its authenticator; create the app with `dependencies=[AUTHENTICATED]` so
    that every route runs `current_caller` (a route that misses it is a route without a key)."""
    app.state.authenticator = Authenticator(settings, store)


_bearer = HTTPBearer(auto_error=False, description="An API key (`treerag keys create --tenant NAME`), or a token "
                                                    "of the OIDC provider when sign-in is on (docs/sign-in.md).")


async def current_caller(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)]
) -> Caller:
    """The FastAPI dependency: every route runs it (the app's global dependency) and routes take
    the caller from it (`CallerDep`); FastAPI runs it once per request."""
    authenticator: Authenticator | None = getattr(request.app.state, "authenticator", None)
    if authenticator is None:  # fail closed: an app without install_auth serves nobody
        raise HTTPException(500, "the gateway has no authenticator configured (install_auth)")
    address = request.client.host if request.client is not None else UNKNOWN_ADDRESS
    return await authenticator.caller(getattr(request.scope.get("route"), "path", None), credentials, address)


AUTHENTICATED = Depends(current_caller)
CallerDep = Annotated[Caller, AUTHENTICATED]

