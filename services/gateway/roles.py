"""What a caller may do: one role per caller, and the role each route needs, in one table.

- reader: ask and view (documents, trees, pages, queries, chats);
- editor: also upload documents, and delete the ones they uploaded;
- admin: also delete any document of their tenant, make, list and revoke their tenant's API
  keys (/v1/keys), and see the operations figures of every tenant (/metrics, /v1/pipeline).
  Settings are the operator's (the environment), so no route changes them.

A role includes the ones below it. An API key carries its role (`treerag keys create --role`); a
key made before roles existed keeps what it could do: admin if it was an admin key, else editor.
A signed-in user's role comes from a claim of the provider's token (services/gateway/claims.py).
A caller whose role is too low gets 403 with an `ErrorBody` naming the role the route needs
(services/gateway/authorization.py).
"""

from __future__ import annotations

from enum import IntEnum

from shared.model.api_keys import ApiKeyRecord


class Role(IntEnum):
    reader = 1
    editor = 2
    admin = 3


# The routes that need more than reader, by method and path template: the one place roles are
# decided. Every other route that asks for a caller needs reader.
ROUTE_ROLES: dict[tuple[str, str], Role] = {
    ("POST", "/v1/documents"): Role.editor,
    ("POST", "/v1/documents/batch"): Role.editor,
    ("DELETE", "/v1/documents/{doc_id}"): Role.editor,
    ("GET", "/v1/keys"): Role.admin,
    ("POST", "/v1/keys"): Role.admin,
    ("DELETE", "/v1/keys/{key_id}"): Role.admin,
    ("GET", "/metrics"): Role.admin,
    ("GET", "/v1/pipeline"): Role.admin,
}


def role_of_key(record: ApiKeyRecord) -> Role:
    if record.role is not None:
        return Role[record.role]
    return Role.admin if record.admin else Role.editor


def needed_role(method: str, path: str | None) -> Role:
    return ROUTE_ROLES.get((method, path or ""), Role.reader)


def deletion_refusal(has: Role, caller: str | None, uploaded_by: str | None) -> str | None:
    """Why a caller may not delete a document `uploaded_by` someone (None: the CLI, or before
    uploaders were kept); None when they may. An admin deletes any of the tenant's documents,
    an editor the ones they uploaded: a document with no known uploader is nobody's own."""
    if has >= Role.admin or (has >= Role.editor and uploaded_by is not None and uploaded_by == caller):
        return None
    if has < Role.editor:
        return refusal(has, Role.editor)
    return ("an editor deletes only the documents they uploaded, and another caller uploaded this one"
            if uploaded_by is not None else
            "nobody's upload is recorded for this document (indexed by the CLI, or before uploaders were "
            "kept), so only an admin may delete it")


def refusal(has: Role, needed: Role) -> str | None:
    """Why a caller with role `has` may not call a route that needs `needed`; None when it may."""
    if has >= needed:
        return None
    return (f"this needs the {needed.name} role and the caller is {has.name}: use a key made with "
            f"`treerag keys create --role {needed.name}`, or sign in as a member of a group mapped to it")
