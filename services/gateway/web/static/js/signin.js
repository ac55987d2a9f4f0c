// Sign-in with the company's OIDC provider, when the gateway has it on (/v1/auth/config):
// the Authorization Code flow with PKCE (S256). The provider sends the browser back to /signin
// with a code, which the gateway redeems (adding the client secret if one is set). The tokens
// stay in this tab's sessionStorage; the ID token is the bearer of every API request, and the
// refresh token renews it a minute before it expires.
const TOKENS_ITEM = "treerag.sign-in";
const PENDING_ITEM = "treerag.sign-in-pending";
const REFRESH_EARLY_S = 60;

function session() {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

function base64url(bytes) {
  return btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function randomText(bytes) {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

function redirectUri() {
  return `${location.origin}/signin`;
}

function tokens() {
  try {
    return JSON.parse(session()?.getItem(TOKENS_ITEM) || "null");
  } catch {
    return null;
  }
}

// When a JWT expires, from its own `exp` (a token response's expires_in is the access token's).
function expiryOf(jwt) {
  try {
    const part = jwt.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(part)).exp;
  } catch {
    return null;
  }
}

function isJwt(token) {
  return typeof token === "string" && token.split(".").length === 3 && token.startsWith("ey");
}

// The gateway takes JWTs only: a refresh answered without a new ID token (some providers) keeps
// the current one, and the user signs in again once it expires.
function keep(answer) {
  const previous = tokens() || {};
  const fresh = answer.id_token || (isJwt(answer.access_token) ? answer.access_token : null);
  const token = fresh || previous.token;
  const expiresAt = fresh ? (expiryOf(fresh) || Date.now() / 1000 + (answer.expires_in || 300)) : previous.expires_at;
  session()?.setItem(TOKENS_ITEM, JSON.stringify({
    token, refresh_token: answer.refresh_token || previous.refresh_token, expires_at: expiresAt,
  }));
  if (fresh) scheduleRefresh();
}

export function signedInToken() {
  return tokens()?.token || null;
}

export function signOut() {
  session()?.removeItem(TOKENS_ITEM);
}

let refreshTimer = null;

function scheduleRefresh() {
  const held = tokens();
  if (!held?.refresh_token) return;
  clearTimeout(refreshTimer);
  const lifetime = held.expires_at - Date.now() / 1000;
  // A minute before expiry; a token shorter-lived than two minutes, at half its remaining life.
  const wait = Math.max(1, lifetime > 2 * REFRESH_EARLY_S ? lifetime - REFRESH_EARLY_S : lifetime / 2);
  refreshTimer = setTimeout(refresh, wait * 1000);
}

export async function refresh() {
  const held = tokens();
  if (!held?.refresh_token) return false;
  const response = await fetch("/v1/auth/refresh", {
    method: "POST", headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ refresh_token: held.refresh_token }),
  });
  if (!response.ok) {
    signOut();
    return false;
  }
  keep(await response.json());
  return true;
}

async function challengeOf(verifier) {
  return base64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
}

async function startSignIn(config) {
  const verifier = randomText(48);
  const state = randomText(16);
  session()?.setItem(PENDING_ITEM, JSON.stringify({ verifier, state, back: location.pathname + location.search }));
  const url = new URL(config.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: "code", client_id: config.client_id, redirect_uri: redirectUri(), scope: config.scope,
    state, code_challenge: await challengeOf(verifier), code_challenge_method: "S256",
  }).toString();
  location.assign(url.toString());
}

// The /signin page: the provider's answer, redeemed through the gateway.
export async function finishSignIn(status) {
  const params = new URLSearchParams(location.search);
  let pending = null;
  try {
    pending = JSON.parse(session()?.getItem(PENDING_ITEM) || "null");
  } catch {
    pending = null;
  }
  session()?.removeItem(PENDING_ITEM);
  if (params.get("error")) {
    status.textContent = `The provider refused the sign-in: ${params.get("error_description") || params.get("error")}.`;
    return;
  }
  if (!pending || params.get("state") !== pending.state || !params.get("code")) {
    status.textContent = "This sign-in was not started from this tab; sign in again.";
    return;
  }
  const response = await fetch("/v1/auth/token", {
    method: "POST", headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ code: params.get("code"), code_verifier: pending.verifier, redirect_uri: redirectUri() }),
  });
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    status.textContent = body?.error?.message || `The gateway could not redeem the sign-in (status ${response.status}).`;
    return;
  }
  keep(body);
  location.replace(pending.back || "/");
}

// The header's Sign in / Sign out button, shown only when the gateway has sign-in on.
export async function showSignIn() {
  const button = document.getElementById("sign-in");
  if (!button) return;
  let config = null;
  try {
    const response = await fetch("/v1/auth/config", { headers: { accept: "application/json" } });
    config = response.ok ? await response.json() : null;
  } catch {
    config = null;
  }
  if (!config?.enabled) return;
  button.hidden = false;
  button.textContent = signedInToken() ? "Sign out" : "Sign in";
  button.addEventListener("click", () => {
    if (signedInToken()) {
      signOut();
      location.reload();
    } else {
      startSignIn(config);
    }
  });
  scheduleRefresh();
}
