"""The web app's sign-in: what it needs to start the Authorization Code flow with PKCE, and the
provider's token endpoint reached through the gateway, so the client secret (for providers that
ask one) stays on the server and the browser needs no CORS from the provider. The browser keeps
the tokens; the gateway keeps nothing."""

from __future__ import annotations

from typing import Annotated

import httpx
from authlib.common.errors import AuthlibBaseError as OAuthError
from authlib.integrations.httpx_client import AsyncOAuth2Client
from fastapi import APIRouter, Depends, HTTPException, Request
from pydantic import BaseModel, Field

from services.gateway.errors import error_responses
from services.gateway.oidc import HTTP_TIMEOUT_S, ProviderUnreachable
from services.gateway.sign_in import SignIn
from shared.settings import Settings

router = APIRouter(tags=["sign-in"])


class SignInConfig(BaseModel):
    enabled: bool = Field(description="False: sign-in is off (TREERAG_OIDC_ISSUER unset); use an API key.")
    authorization_endpoint: str | None = None
    end_session_endpoint: str | None = None
    client_id: str | None = None
    scope: str = "openid profile email offline_access"


class CodeRedemption(BaseModel):
    code: str = Field(min_length=1, max_length=4096)
    code_verifier: str = Field(min_length=43, max_length=128, description="The PKCE verifier (RFC 7636).")
    redirect_uri: str = Field(min_length=1, max_length=2048)


class Refresh(BaseModel):
    refresh_token: str = Field(min_length=1, max_length=8192)


class Tokens(BaseModel):
    id_token: str | None = None
    access_token: str
    refresh_token: str | None = None
    expires_in: int | None = None
    token_type: str = "Bearer"


def sign_in_of(request: Request) -> SignIn:
    sign_in: SignIn | None = getattr(request.app.state.authenticator, "sign_in", None)
    if sign_in is None:
        raise HTTPException(404, "sign-in is off on this gateway (TREERAG_OIDC_ISSUER is unset): use an API key")
    return sign_in


SignInDep = Annotated[SignIn, Depends(sign_in_of)]


@router.get("/v1/auth/config", response_model=SignInConfig, summary="What the web app needs to sign in")
async def get_sign_in_config(request: Request) -> SignInConfig:
    sign_in: SignIn | None = getattr(request.app.state.authenticator, "sign_in", None)
    if sign_in is None:
        return SignInConfig(enabled=False)
    try:
        provider = await sign_in.verifier.provider()
    except ProviderUnreachable as exc:
        raise HTTPException(503, f"{exc}; retry later, or use an API key", headers={"Retry-After": "5"}) from exc
    settings: Settings = request.app.state.settings
    return SignInConfig(enabled=True, authorization_endpoint=provider.authorization_endpoint,
                        end_session_endpoint=provider.end_session_endpoint, client_id=settings.oidc_client_id)


async def _token_request(request: Request, sign_in: SignIn, grant: dict[str, str]) -> Tokens:
    """The provider's token endpoint, through authlib's OAuth 2 client: with the client secret
    (HTTP Basic) when one is set, else as a public client (PKCE)."""
    settings: Settings = request.app.state.settings
    provider = await sign_in.verifier.provider()
    secret = settings.oidc_client_secret.get_secret_value() if settings.oidc_client_secret else None
    try:
        async with AsyncOAuth2Client(client_id=settings.oidc_client_id, client_secret=secret,
                                     token_endpoint_auth_method="client_secret_basic" if secret else "none",
                                     timeout=HTTP_TIMEOUT_S) as client:
            answer = await client.fetch_token(provider.token_endpoint, **grant)
    except OAuthError as exc:
        raise HTTPException(400, f"the OIDC provider refused: {exc.description or exc.error}; sign in again") from exc
    except httpx.HTTPError as exc:
        raise HTTPException(503, "the OIDC provider's token endpoint did not answer; retry later",
                            headers={"Retry-After": "5"}) from exc
    return Tokens.model_validate(dict(answer))


@router.post("/v1/auth/token", response_model=Tokens, summary="Redeem a sign-in code (PKCE) for tokens",
             responses=error_responses(400, 404, 422, meanings={400: "The provider refused the code.",
                                                                404: "Sign-in is off on this gateway."}))
async def redeem_code(body: CodeRedemption, request: Request, sign_in: SignInDep) -> Tokens:
    return await _token_request(request, sign_in, {"grant_type": "authorization_code", "code": body.code,
                                                   "code_verifier": body.code_verifier,
                                                   "redirect_uri": body.redirect_uri})


@router.post("/v1/auth/refresh", response_model=Tokens, summary="New tokens for a refresh token",
             responses=error_responses(400, 404, 422, meanings={400: "The provider refused the refresh token.",
                                                                404: "Sign-in is off on this gateway."}))
async def refresh_tokens(body: Refresh, request: Request, sign_in: SignInDep) -> Tokens:
    return await _token_request(request, sign_in, {"grant_type": "refresh_token",
                                                   "refresh_token": body.refresh_token})
