"""Who is calling: `Authorization: Bearer <API key>` on every route but the public ones, and a
request budget per key.

With TREERAG_AUTH=on (the default) a request without a valid key is answered 401 with
`WWW-Authenticate: Bearer`; a key over its budget 429 with `Retry-After`. A client address
whose keys keep failing (TREERAG_AUTH_FAILURES_PER_S, TREERAG_AUTH_FAILURE_BURST) gets 429
before any key of it is looked up, so guessing keys costs the store nothing past the burst; and
unknown key ids are remembered apart from known ones, so a flood of them cannot evict the keys
in use from the cache. The caller's tenant
scopes everything the routes read and write (see docs/services.md, Security). With
TREERAG_AUTH=off every request is the TREERAG_TENANT tenant, admin, without limits: for a
gateway that only its own machine can reach.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, TypeVar

from fastapi import Depends, FastAPI, HTTPException, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from services.gateway.oidc import TokenRefused, looks_like_jwt
from services.gateway.rate_limit import RateLimiter, retry_after_header
from services.gateway.roles import Role, role_of_key
from services.gateway.sign_in import SignIn
from shared.adapters.logs import log_fields
from shared.app.api_keys import authenticate
from shared.model.api_keys import ApiKeyRecord
from shared.ports.api_keys import KeyLookup
from shared.settings import Settings

logger = logging.getLogger(__name__)
T = TypeVar("T")

# Routes anyone may call: probes, and the web app's pages, which hold no data (their scripts
# fetch it with the key the user entered). Every other route asks for a key.
PUBLIC_ROUTES = frozenset({
    "/healthz", "/readyz",
    "/", "/ask", "/pipeline", "/documents/{doc_id}", "/docs", "/redoc",
    # Sign-in itself: the provider's code or refresh token is the credential.
    "/signin", "/v1/auth/config", "/v1/auth/token", "/v1/auth/refresh",
})
REALM = 'Bearer realm="treerag"'
# Key records looked up recently, and apart from them the key ids found unknown (a guessed id
# asked again costs no store read, and guesses never push a key in use out of the cache).
MAX_CACHED_KEYS = 10_000
MAX_UNKNOWN_KEYS = 10_000
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


class KeyCache:
    """Key records by id, each reused for `ttl_s`: a revoked key is refused within that time
    on every replica, and a request costs no store read while its key is cached. Known and
    unknown ids are kept in two bounded lists, oldest dropped first."""

    def __init__(self, store: Callable[[], KeyLookup], ttl_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.ttl_s = ttl_s
        self.clock = clock
        self._known: OrderedDict[str, tuple[ApiKeyRecord, float]] = OrderedDict()
        self._unknown: OrderedDict[str, float] = OrderedDict()

    async def get(self, key_id: str) -> ApiKeyRecord | None:
        now = self.clock()
        known = self._known.get(key_id)
        if known is not None and now - known[1] < self.ttl_s:
            return known[0]
        seen = self._unknown.get(key_id)
        if seen is not None and now - seen < self.ttl_s:
            return None
        record = await self.store().get(key_id)
        if record is None:
            self._known.pop(key_id, None)
            _remember(self._unknown, key_id, now, MAX_UNKNOWN_KEYS)
        else:
            self._unknown.pop(key_id, None)
            _remember(self._known, key_id, (record, now), MAX_CACHED_KEYS)
        return record


def _remember(entries: OrderedDict[str, T], key: str, value: T, limit: int) -> None:
    entries[key] = value
    entries.move_to_end(key)
    while len(entries) > limit:
        entries.popitem(last=False)


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
        if self.failures is not None and (wait_s := self.failures.wait(address)) > 0:
            raise HTTPException(429, "too many requests with keys that are not valid from this address; retry after "
                                     "the time in Retry-After with a valid key",
                                headers={"Retry-After": retry_after_header(wait_s)})
        if self.sign_in is not None and looks_like_jwt(credentials.credentials):
            try:
                tenant, role, subject = await self.sign_in.identify(credentials.credentials)
            except TokenRefused as exc:
                raise unauthorized(str(exc), invalid=True) from exc
            return Caller(tenant=tenant, role=role, subject=subject)
        record = await authenticate(self.keys, credentials.credentials)
        if record is None:
            if self.failures is not None:
                self.failures.take(address)
            raise unauthorized("the API key is not valid (unknown, revoked or mistyped)", invalid=True)
        if self.limiter is not None and (wait_s := self.limiter.take(record.key_id)) > 0:
            logger.info("request over the key's rate limit", extra=log_fields(key_id=record.key_id))
            raise HTTPException(429, "too many requests for this API key; retry after the time in Retry-After",
                                headers={"Retry-After": retry_after_header(wait_s)})
        return Caller(tenant=record.tenant, role=role_of_key(record), key_id=record.key_id)


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

