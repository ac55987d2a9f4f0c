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

function detailOf(body, status) {
  if (body && typeof body.detail === "string") return body.detail;
  if (body && Array.isArray(body.detail)) return body.detail.map((d) => d.msg).join("; ");
  if (body && body.reason) return body.reason;
  return `the server answered ${status}`;
}

// The API key the user entered, kept for this tab only (sessionStorage) and sent as a Bearer
// token with every API request. A gateway with TREERAG_AUTH=off needs none.
const KEY_ITEM = "treerag.api-key";

export function authHeaders() {
  const key = sessionStorage.getItem(KEY_ITEM);
  return key ? { authorization: `Bearer ${key}` } : {};
}

function showKeyState() {
  const form = document.getElementById("key-form");
  if (!form) return;
  const saved = Boolean(sessionStorage.getItem(KEY_ITEM));
  form.querySelector("#key-forget").hidden = !saved;
  form.querySelector("#key-state").textContent = saved ? "Key set for this tab." : "";
}

function askForKey(message) {
  const form = document.getElementById("key-form");
  if (!form) return;
  form.querySelector("#key-state").textContent = message;
  form.classList.add("key-needed");
}

const keyForm = document.getElementById("key-form");
if (keyForm) {
  const input = keyForm.querySelector("#api-key");
  keyForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const key = input.value.trim();
    if (!key) return;
    sessionStorage.setItem(KEY_ITEM, key);
    input.value = "";
    location.reload(); // every panel loads again with the key
  });
  keyForm.querySelector("#key-forget").addEventListener("click", () => {
    sessionStorage.removeItem(KEY_ITEM);
    location.reload();
  });
  showKeyState();
}

// An API response of 401 (no key, or a wrong one) points at the key field.
export function checkAuthorized(status) {
  if (status !== 401) return;
  askForKey(sessionStorage.getItem(KEY_ITEM)
    ? "The gateway refused this key: enter a valid one."
    : "This gateway needs an API key: enter it here (the admin key `make up` prints, or one from "
      + "`treerag keys create --tenant NAME`).");
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
  if (!response.ok) throw new ApiError(response.status, detailOf(body, response.status), body);
  return body;
}

// A document's name as shown: its file name, or its id when the name is blank (names are labels).
export function docName(doc) {
  return (doc.file_name || "").trim() || doc.doc_id;
}

export function pagesLabel(pages) {
  if (!pages.length) return "";
  if (pages.length === 1) return `p. ${pages[0]}`;
  return `pp. ${pages[0]}–${pages[pages.length - 1]}`;
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
    throw new ApiError(response.status, detailOf(parsed, response.status), parsed);
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
