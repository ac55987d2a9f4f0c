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

export async function api(path, options = {}) {
  const response = await fetch(path, {
    headers: { accept: "application/json", ...(options.body ? { "content-type": "application/json" } : {}) },
    ...options,
  });
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
