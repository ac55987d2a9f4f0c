"""A signed-in user's tenant and role, read from the claims of a verified token.

The tenant is the value of TREERAG_OIDC_TENANT_CLAIM (or TREERAG_TENANT when none is set); the
role comes from TREERAG_OIDC_ROLE_CLAIM, a string or a list of group or role names, through
TREERAG_OIDC_ROLES ('group=role,...', '*' for anyone else); the highest role found wins. A
claim may be nested (`realm_access.roles`, as Keycloak puts realm roles).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from services.gateway.roles import Role
from shared.model.ids import TENANT_PATTERN

ANYONE = "*"


class ClaimsRefused(Exception):
    """The token is valid but says no tenant or no role we serve: the message says which."""


@dataclass(frozen=True)
class ClaimMapping:
    tenant_claim: str
    default_tenant: str
    role_claim: str
    roles: Mapping[str, Role]  # empty: the claim's values are role names

    @classmethod
    def parse(cls, tenant_claim: str, default_tenant: str, role_claim: str, roles: str) -> ClaimMapping:
        mapping: dict[str, Role] = {}
        for pair in filter(None, (part.strip() for part in roles.split(","))):
            group, sep, role = pair.rpartition("=")
            if not sep or not group.strip() or role.strip() not in Role.__members__:
                raise ValueError(f"TREERAG_OIDC_ROLES: {pair!r} is not 'group=role' with a role among "
                                 f"{', '.join(Role.__members__)}")
            mapping[group.strip()] = Role[role.strip()]
        return cls(tenant_claim, default_tenant, role_claim, mapping)


def claim(claims: Mapping[str, Any], path: str) -> Any:
    """The claim at a dotted path; a claim whose own name has dots is found first."""
    if path in claims:
        return claims[path]
    value: Any = claims
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def tenant_of(claims: Mapping[str, Any], mapping: ClaimMapping) -> str:
    if not mapping.tenant_claim:
        return mapping.default_tenant
    value = claim(claims, mapping.tenant_claim)
    if not isinstance(value, str) or not re.match(TENANT_PATTERN, value):
        raise ClaimsRefused(f"the token's {mapping.tenant_claim!r} claim names no tenant (1-64 letters, digits, '.', "
                            "'_' or '-'): ask the provider's admin to set it, or TREERAG_OIDC_TENANT_CLAIM")
    return value


def role_of(claims: Mapping[str, Any], mapping: ClaimMapping) -> Role:
    value = claim(claims, mapping.role_claim)
    names = [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)] if isinstance(
        value, list) else []
    if mapping.roles:
        found = [mapping.roles[name] for name in names if name in mapping.roles]
        if not found and ANYONE in mapping.roles:
            found = [mapping.roles[ANYONE]]
    else:
        found = [Role[name] for name in names if name in Role.__members__]
    if not found:
        raise ClaimsRefused(f"the token's {mapping.role_claim!r} claim holds no group mapped to a role: ask an "
                            "admin to add you to one (TREERAG_OIDC_ROLES lists them)")
    return max(found)
