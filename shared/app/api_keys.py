"""API keys: one rule for issuing them (`treerag keys create`) and checking them (the gateway).

A key reads `trk_<key id>_<secret>`: the 12-hex-digit id finds the stored record, the secret
(32 random bytes, URL-safe base64) is checked against the SHA-256 stored with it in constant
time. Only the hash is stored: a copy of the store does not yield a usable key. A plain hash
suffices because the secret has 256 bits of entropy (nothing to guess, so no slow hash needed).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import TypeGuard

from shared.model.api_keys import ApiKeyRecord, RoleName
from shared.model.clock import utc_now
from shared.ports.api_keys import KeyLookup, KeyStore

KEY_PREFIX = "trk"
_KEY = re.compile(rf"^{KEY_PREFIX}_([0-9a-f]{{12}})_([A-Za-z0-9_-]{{43}})$")


def secret_digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def parse_key(key: str) -> tuple[str, str] | None:
    """(key id, secret) of a well-formed key, else None."""
    match = _KEY.match(key.strip())
    return (match.group(1), match.group(2)) if match else None


@dataclass(frozen=True)
class IssuedKey:
    key: str  # shown once: only its hash is stored
    record: ApiKeyRecord


def new_key(tenant: str, *, admin: bool = False, role: RoleName | None = None) -> IssuedKey:
    key_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    record = ApiKeyRecord(key_id=key_id, tenant=tenant, admin=admin or role == "admin", role=role,
                          secret_sha256=secret_digest(secret),
                          created_at=utc_now())
    return IssuedKey(f"{KEY_PREFIX}_{key_id}_{secret}", record)


async def issue_key(store: KeyStore, tenant: str, *, admin: bool = False, role: RoleName | None = None) -> IssuedKey:
    """Create and store a key (a new id is drawn in the unlikely case the first is taken)."""
    for _ in range(3):
        issued = new_key(tenant, admin=admin, role=role)
        try:
            await store.add(issued.record)
        except ValueError:
            continue
        return issued
    raise RuntimeError("could not draw an unused key id; check the key store")


def key_matches(record: ApiKeyRecord, secret: str) -> bool:
    return hmac.compare_digest(record.secret_sha256, secret_digest(secret))


def accepts(record: ApiKeyRecord | None, secret: str) -> TypeGuard[ApiKeyRecord]:
    """Whether the key with this stored record (None: its id is unknown) and this secret is valid."""
    return record is not None and not record.revoked and key_matches(record, secret)


async def authenticate(store: KeyLookup, key: str) -> ApiKeyRecord | None:
    """The stored record of a valid, unrevoked key; None for anything else (malformed, unknown,
    wrong secret or revoked: the caller answers all of them alike)."""
    parsed = parse_key(key)
    if parsed is None:
        return None
    key_id, secret = parsed
    record = await store.get(key_id)
    return record if accepts(record, secret) else None
