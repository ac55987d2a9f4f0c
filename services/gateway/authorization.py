"""Roles enforced: the app's global dependency refuses a caller below the role its route needs
(services/gateway/roles.py's table), and the OpenAPI schema lists that 403 on those routes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.routing import APIRoute, iter_route_contexts

from services.gateway.auth import Caller, current_caller
from services.gateway.errors import error_responses
from services.gateway.roles import Role, needed_role, refusal


async def authorized_caller(request: Request, caller: Annotated[Caller, Depends(current_caller)]) -> Caller:
    """The caller, refused with 403 below the route's role. FastAPI runs `current_caller` once
    per request, so the routes that take `CallerDep` get this same caller."""
    needed = needed_role(request.method, getattr(request.scope.get("route"), "path", None))
    reason = refusal(caller.role, needed)
    if reason is not None:
        raise HTTPException(403, reason)
    return caller


AUTHORIZED = Depends(authorized_caller)


def declare_forbidden(app: FastAPI) -> None:
    """Each route above reader lists its 403, worded with the role it needs (call before the
    schema is first built)."""
    for context in iter_route_contexts(app.routes):  # the included routers' routes too
        route = context.original_route
        if not isinstance(route, APIRoute) or context.path is None:
            continue
        for method in route.methods or ():
            needed = needed_role(method, context.path)
            if needed > Role.reader and 403 not in route.responses:  # a route may word its own
                route.responses.update(error_responses(403, meanings={
                    403: f"The caller's role is below {needed.name} (`message` names the role needed)."}))
