"""API keys as they are stored: an id to find one by, the SHA-256 of its secret, never the key."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from shared.model.clock import utc_now
from shared.model.ids import TENANT_PATTERN

KEY_ID_PATTERN = r"^[0-9a-f]{12}$"
RoleName = Literal["admin", "editor", "reader"]


class ApiKeyRecord(BaseModel):
    key_id: str = Field(pattern=KEY_ID_PATTERN, description="Public part of the key, shown by `treerag keys list`.")
    tenant: str = Field(pattern=TENANT_PATTERN)
    admin: bool = Field(default=False, description="May read the operations endpoints (/metrics, /v1/pipeline).")
    role: RoleName | None = Field(
        default=None, description="What the key may do; None (keys made before roles): admin for an admin key, "
        "else editor.")
    secret_sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256 (hex) of the key's secret part.")
    created_at: datetime = Field(default_factory=utc_now)
    revoked_at: datetime | None = None

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None
