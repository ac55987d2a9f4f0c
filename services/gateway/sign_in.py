"""Callers signed in with the OIDC provider: a bearer JWT verified (services/gateway/oidc.py),
then its claims mapped to a tenant and a role (services/gateway/claims.py). On only when
TREERAG_OIDC_ISSUER is set; API keys keep working beside it."""

from __future__ import annotations

import logging

from fastapi import HTTPException

from services.gateway.claims import ClaimMapping, ClaimsRefused, role_of, tenant_of
from services.gateway.oidc import OidcVerifier, ProviderUnreachable
from services.gateway.roles import Role
from shared.adapters.logs import log_fields
from shared.settings import Settings

logger = logging.getLogger(__name__)


class SignIn:
    def __init__(self, settings: Settings, verifier: OidcVerifier | None = None) -> None:
        self.verifier = verifier or OidcVerifier(settings)
        self.mapping = ClaimMapping.parse(settings.oidc_tenant_claim, settings.tenant, settings.oidc_role_claim,
                                          settings.oidc_roles)

    @classmethod
    def configured(cls, settings: Settings) -> SignIn | None:
        return cls(settings) if settings.oidc_issuer else None

    async def identify(self, token: str) -> tuple[str, Role, str]:
        """(tenant, role, subject) of a valid token; TokenRefused for a token that is not (the
        caller answers 401), 403 for one whose claims give no tenant or role, 503 when the
        provider cannot be read."""
        try:
            claims = await self.verifier.claims(token)
        except ProviderUnreachable as exc:
            logger.warning("oidc provider unreachable", extra=log_fields(error=str(exc)))
            raise HTTPException(503, f"{exc}; retry later, or use an API key",
                                headers={"Retry-After": "5"}) from exc
        try:
            return tenant_of(claims, self.mapping), role_of(claims, self.mapping), str(claims.get("sub", ""))
        except ClaimsRefused as exc:
            raise HTTPException(403, str(exc)) from exc
