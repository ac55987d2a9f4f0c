"""A signed-in user's tenant and role from its token's claims, as each provider words them."""

from __future__ import annotations

import pytest

from services.gateway.claims import ClaimMapping, ClaimsRefused, role_of, tenant_of
from services.gateway.roles import Role

GROUPS = ClaimMapping.parse("org", "default", "groups", "treerag-admins=admin, treerag-editors=editor, staff=reader")


def test_the_highest_mapped_group_wins_and_unmapped_groups_are_ignored() -> None:
    assert role_of({"groups": ["staff", "treerag-editors", "sales"]}, GROUPS) == Role.editor
    assert role_of({"groups": ["treerag-admins", "staff"]}, GROUPS) == Role.admin
    assert role_of({"groups": "staff"}, GROUPS) == Role.reader  # a single group as a string


def test_no_mapped_group_is_refused_unless_anyone_is_mapped() -> None:
    with pytest.raises(ClaimsRefused, match="no group mapped"):
        role_of({"groups": ["sales"]}, GROUPS)
    with pytest.raises(ClaimsRefused):
        role_of({}, GROUPS)
    anyone = ClaimMapping.parse("", "default", "groups", "treerag-admins=admin,*=reader")
    assert role_of({"groups": ["sales"]}, anyone) == Role.reader
    assert role_of({"groups": ["treerag-admins"]}, anyone) == Role.admin


def test_without_a_mapping_the_claim_holds_role_names_and_may_be_nested() -> None:
    keycloak = ClaimMapping.parse("", "default", "realm_access.roles", "")
    assert role_of({"realm_access": {"roles": ["offline_access", "editor"]}}, keycloak) == Role.editor
    with pytest.raises(ClaimsRefused):
        role_of({"realm_access": {"roles": ["offline_access"]}}, keycloak)


def test_the_tenant_is_the_claim_or_the_default_and_must_be_a_tenant_name() -> None:
    assert tenant_of({"org": "acme"}, GROUPS) == "acme"
    assert tenant_of({"org": "acme"}, ClaimMapping.parse("", "default", "groups", "")) == "default"
    for bad in ({}, {"org": "a b/../c"}, {"org": ["acme"]}):
        with pytest.raises(ClaimsRefused, match="names no tenant"):
            tenant_of(bad, GROUPS)


def test_a_mapping_that_does_not_parse_says_what_is_wrong() -> None:
    for bad in ("admins", "admins=root", "=admin"):
        with pytest.raises(ValueError, match="TREERAG_OIDC_ROLES"):
            ClaimMapping.parse("", "default", "groups", bad)
