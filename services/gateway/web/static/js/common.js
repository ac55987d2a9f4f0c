import { showSignIn, signedInToken } from "./signin.js";

// Helpers every page uses. Text from documents is only ever set with textContent, never as HTML.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    if (name === "text") node.textContent = value;
    else if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

// The key prompt's words, wherever a request is refused for want of a valid key.
export const KEY_NEEDED = "This gateway needs an API key: enter it in the API key field at the top.";
const KEY_REFUSED = "The gateway refused this key: enter a valid one in the API key field at the top.";
const ADMIN_NEEDED = "This needs an admin key (the one `make up` prints, or one from `treerag keys create --tenant NAME --admin`).";

// What a refused request says to the user: a missing or wrong key is a key to enter, never "not
// found" or an HTTP status.
export function refusal(status, body = null) {
  if (status === 401) return storedKey() ? KEY_REFUSED : KEY_NEEDED;
  if (status === 403) return ADMIN_NEEDED;
  if (body && typeof body.detail === "string") return body.detail;
  if (body && Array.isArray(body.detail)) return body.detail.map((d) => d.msg).join("; ");
  if (body && body.reason) return body.reason;
  return `the gateway could not do it (status ${status})`;
}

// The API key the user entered, sent as a Bearer token with every API request (a gateway with
// TREERAG_AUTH=off needs none). "Remember on this device" keeps it in localStorage, for every
// tab and visit; otherwise sessionStorage keeps it for this tab only.
const KEY_ITEM = "treerag.api-key";

function storage(kind) {
  try {
    return kind === "local" ? window.localStorage : window.sessionStorage;
  } catch {
    return null; // the browser keeps no storage for this site
  }
}

export function storedKey() {
  return storage("session")?.getItem(KEY_ITEM) || storage("local")?.getItem(KEY_ITEM) || null;
}

function keyRemembered() {
  return Boolean(storage("local")?.getItem(KEY_ITEM));
}

// One key at a time: a key entered replaces the one kept before, wherever it was kept.
function saveKey(key, remember) {
  forgetKey();
  storage(remember ? "local" : "session")?.setItem(KEY_ITEM, key);
}

function forgetKey() {
  for (const kind of ["local", "session"]) storage(kind)?.removeItem(KEY_ITEM);
}

// A key entered in the key box wins over a sign-in (an operator may paste an admin key).
export function authHeaders() {
  const bearer = storedKey() || signedInToken();
  return bearer ? { authorization: `Bearer ${bearer}` } : {};
}

function showKeyState() {
  const form = document.getElementById("key-form");
  if (!form) return;
  const saved = Boolean(storedKey());
  form.querySelector("#key-forget").hidden = !saved;
  form.querySelector("#key-remember").checked = keyRemembered();
  form.querySelector("#key-state").textContent = !saved ? ""
    : keyRemembered() ? "Key remembered on this device." : "Key set for this tab.";
}

// A 401 opens the box above the page that says where a key comes from, and marks the key field.
function askForKey() {
  const form = document.getElementById("key-form");
  if (!form) return;
  form.querySelector("#key-state").textContent = storedKey() ? "Key refused: enter a valid one." : "Enter your API key.";
  form.classList.add("key-needed");
  const help = document.getElementById("key-help");
  if (help) {
    help.querySelector("#key-help-refused").hidden = !storedKey();
    help.hidden = false;
  }
}

const keyForm = document.getElementById("key-form");
if (keyForm) {
  const input = keyForm.querySelector("#api-key");
  keyForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const key = input.value.trim();
    if (!key) {
      input.focus();
      return;
    }
    saveKey(key, keyForm.querySelector("#key-remember").checked);
    input.value = "";
    location.reload(); // every panel loads again with the key
  });
  // On a phone the form folds behind the header's "API key" button.
  const toggle = document.getElementById("key-toggle");
  toggle?.addEventListener("click", () => {
    const open = keyForm.classList.toggle("open");
    toggle.setAttribute("aria-expanded", String(open));
    if (open) input.focus();
  });
  keyForm.querySelector("#key-forget").addEventListener("click", () => {
    forgetKey();
    location.reload();
  });
  showKeyState();
}

showSignIn();

// An API response of 401 (no key, or a wrong one) points at the key field.
export function checkAuthorized(status) {
  if (status === 401) askForKey();
}

export async function api(path, options = {}) {
  const response = await fetch(path, {
    ...options,
    headers: {
      accept: "application/json",
      ...(options.body ? { "content-type": "application/json" } : {}),
      ...authHeaders(),
      ...(options.headers || {}),
    },
  });
  checkAuthorized(response.status);
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) throw new ApiError(response.status, refusal(response.status, body), body);
  return body;
}

// A document's name as shown: its file name, or its id when the name is blank (names are labels).
export function docName(doc) {
  return (doc.file_name || "").trim() || doc.doc_id;
}

// "FY2023 Q2, ended 2023-06-02", as `treerag tree` says it.
export function periodText(p) {
  if (!p) return "";
  const parts = [];
  if (p.fiscal_year) parts.push(`FY${p.fiscal_year}${p.fiscal_quarter ? ` Q${p.fiscal_quarter}` : ""}`);
  else if (p.fiscal_quarter) parts.push(`Q${p.fiscal_quarter}`);
  if (p.period_end) parts.push(`ended ${p.period_end}`);
  if (!parts.length && p.years?.length) parts.push(p.years.join(", "));
  return parts.join(", ");
}

// A document's card in one line: "Apple Inc. · 10-K · FY2023, ended 2023-09-30"; the facts the
// card could not read are left out ('' when it read none).
export function cardLine(card) {
  if (!card) return "";
  const type = card.doc_type && card.doc_type !== "unknown" ? card.doc_type : "";
  return [card.issuer || card.subject, type, periodText(card.period)].filter(Boolean).join(" · ");
}

// Pages as a reader finds them: the number printed on the page first, and the page's place in
// the file beside it when the two differ ("p. 36 (PDF page 40)"); `labels[k]` is what physical
// page k + 1 prints ('' for none, no labels when the document carries none).
export function pagesLabel(pages, labels = []) {
  if (!pages.length) return "";
  const first = pages[0], last = pages[pages.length - 1];
  const printed = (page) => labels[page - 1] || "";
  const differs = (page) => printed(page) && printed(page) !== String(page);
  if (pages.length === 1 || first === last) return differs(first) ? `p. ${printed(first)} (PDF page ${first})` : `p. ${first}`;
  if (differs(first) && printed(last)) return `pp. ${printed(first)}–${printed(last)} (PDF pages ${first}–${last})`;
  return `pp. ${first}–${last}`;
}

// One document's record with its whole card (GET /v1/documents/{id}), asked once per page view
// while it is ready: its page count, format and page labels do not change while its id holds.
const details = new Map();
export function documentDetail(docId) {
  if (!details.has(docId)) {
    const asked = api(`/v1/documents/${encodeURIComponent(docId)}`);
    details.set(docId, asked);
    asked.then((doc) => doc.status !== "ready" && details.delete(docId), () => details.delete(docId));
  }
  return details.get(docId);
}

// The printed page labels of a document ([] when it carries none or cannot be read).
export async function pageLabels(docId) {
  try {
    return (await documentDetail(docId)).card?.page_labels || [];
  } catch {
    return [];
  }
}

export function statusLabel(status) {
  return { uploaded: "Uploaded, waiting", indexing: "Indexing…", ready: "Ready", failed: "Failed" }[status] || status;
}

// POST `body` to `path` asking for server-sent events; `onEvent(name, data)` for each as it
// arrives. Resolves once the stream ends; rejects with ApiError when the request is refused.
export async function streamEvents(path, body, onEvent) {
  const response = await fetch(path, {
    method: "POST",
    headers: { accept: "text/event-stream", "content-type": "application/json", ...authHeaders() },
    body: JSON.stringify(body),
  });
  checkAuthorized(response.status);
  if (!response.ok) {
    let parsed = null;
    try {
      parsed = await response.json();
    } catch {
      parsed = null;
    }
    throw new ApiError(response.status, refusal(response.status, parsed), parsed);
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data.push(line.slice(6));
      }
      if (data.length) onEvent(name, JSON.parse(data.join("\n")));
    }
    if (done) return;
  }
}
