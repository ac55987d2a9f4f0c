"""`/v1/keys`: an admin makes, lists and revokes their own tenant's API keys (the role table in
services/gateway/roles.py says only admins may). A key is shown once, when it is made: only its
hash is stored. A revoked key stops working at once on the gateway that revoked it, and on the
others once what they hold of it expires (TREERAG_AUTH_CACHE_S)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Request
from pydantic import BaseModel, Field

from services.gateway.auth import CallerDep
from services.gateway.errors import KEYED, error_responses
from services.gateway.ports import GatewayDep
from services.gateway.roles import role_of_key
from shared.app.api_keys import issue_key
from shared.model.api_keys import KEY_ID_PATTERN, ApiKeyRecord, RoleName

router = APIRouter(tags=["keys"], responses=error_responses(*KEYED))

KeyId = Annotated[str, Path(pattern=KEY_ID_PATTERN, description="A key's id (`GET /v1/keys`).")]


class KeyOut(BaseModel):
    key_id: str = Field(description="The key's public id: the part after `trk_` and before the secret.")
    tenant: str
    role: RoleName
    created_at: datetime
    revoked_at: datetime | None = None

    @classmethod
    def of(cls, record: ApiKeyRecord) -> KeyOut:
        return cls(key_id=record.key_id, tenant=record.tenant, role=role_of_key(record).name,
                   created_at=record.created_at, revoked_at=record.revoked_at)


class NewKey(BaseModel):
    role: RoleName = Field(default="editor", description="What the key may do (services/gateway/roles.py).")


class KeyMade(KeyOut):
    key: str = Field(description="The key itself, shown only now: store it, it cannot be read again.")


@router.get("/v1/keys", response_model=list[KeyOut], name="list_keys")
async def list_keys(caller: CallerDep, gateway: GatewayDep) -> list[KeyOut]:
    """The tenant's keys, revoked ones included, oldest first; never a secret or its hash."""
    return [KeyOut.of(record) for record in await gateway.keys.list() if record.tenant == caller.tenant]


@router.post("/v1/keys", response_model=KeyMade, status_code=201, name="create_key",
             responses=error_responses(422))
async def create_key(body: NewKey, caller: CallerDep, gateway: GatewayDep) -> KeyMade:
    """A new key of the caller's tenant with the role asked for."""
    issued = await issue_key(gateway.keys, caller.tenant, role=body.role)
    return KeyMade(key=issued.key, **KeyOut.of(issued.record).model_dump())


@router.delete("/v1/keys/{key_id}", response_model=KeyOut, name="revoke_key",
               responses=error_responses(404, 422, meanings={404: "No key of the caller's tenant has this id."}))
async def revoke_key(key_id: KeyId, request: Request, caller: CallerDep, gateway: GatewayDep) -> KeyOut:
    """Revoke a key of the tenant (kept in the list, marked revoked); revoking it again changes nothing."""
    record = await gateway.keys.get(key_id)
    if record is None or record.tenant != caller.tenant:
        raise HTTPException(404, f"no key with id {key_id!r} in this tenant; `GET /v1/keys` lists them")
    await gateway.keys.revoke(key_id)
    request.app.state.authenticator.keys.forget(key_id)
    revoked = await gateway.keys.get(key_id)
    return KeyOut.of(revoked if revoked is not None else record)
