// Documents: upload several documents with per-file progress; the list polls each document's status.
import { api, authHeaders, checkAuthorized, docName, el, statusLabel } from "./common.js";

const POLL_MS = 2000;
const PAGE = 50; // documents per page of the list, newest first
const dropzone = document.getElementById("dropzone");
const input = document.getElementById("file-input");
const uploads = document.getElementById("uploads");
const tbody = document.querySelector("#documents tbody");
const listStatus = document.getElementById("list-status");
const statusFilter = document.getElementById("status-filter");
const showMore = document.getElementById("show-more");
let shown = PAGE; // the list shows this many of the newest documents; "Show more" adds a page
let canDelete = false; // offered once the API has DELETE /v1/documents/{doc_id}
const uploadStates = new Map(); // doc id -> the status line of its upload, kept current by refresh()

function upload(file) {
  const progress = el("progress", { max: 100, value: 0, "aria-label": `Upload of ${file.name}` });
  const state = el("span", { class: "muted", text: "uploading…" });
  uploads.append(el("li", {}, el("span", { class: "file-name", text: file.name }), " ", progress, " ", state));
  const form = new FormData();
  form.append("file", file, file.name);
  const request = new XMLHttpRequest();
  request.open("POST", "/v1/documents");
  for (const [name, value] of Object.entries(authHeaders())) request.setRequestHeader(name, value);
  request.responseType = "json";
  request.upload.addEventListener("progress", (event) => {
    if (event.lengthComputable) progress.value = Math.round((event.loaded / event.total) * 100);
  });
  request.addEventListener("load", () => {
    checkAuthorized(request.status);
    const body = request.response || {};
    if (request.status === 202 || request.status === 200) {
      progress.value = 100;
      state.textContent = body.duplicate ? `already uploaded (${statusLabel(body.status)})` : "uploaded; indexing follows";
      if (!body.duplicate) uploadStates.set(body.doc_id, state);
      refresh();
    } else {
      state.textContent = `refused: ${typeof body.detail === "string" ? body.detail : request.status}`;
      state.className = "error";
    }
  });
  request.addEventListener("error", () => {
    state.textContent = "the upload failed: the gateway could not be reached";
    state.className = "error";
  });
  request.send(form);
}

function uploadAll(files) {
  for (const file of files) upload(file);
}

input.addEventListener("change", () => {
  uploadAll(input.files);
  input.value = "";
});
for (const name of ["dragenter", "dragover"]) {
  dropzone.addEventListener(name, (event) => {
    event.preventDefault();
    dropzone.classList.add("over");
  });
}
for (const name of ["dragleave", "drop"]) {
  dropzone.addEventListener(name, () => dropzone.classList.remove("over"));
}
dropzone.addEventListener("drop", (event) => {
  event.preventDefault();
  uploadAll(event.dataTransfer.files);
});

// Documents whose Delete was pressed once: the list is redrawn every few seconds, and a redraw
// between the two presses must not turn the confirming press into a first one again.
const armedDeletes = new Set();

function deleteButton(doc) {
  if (!canDelete) return el("td");
  const armed = armedDeletes.has(doc.doc_id);
  const button = el("button", { type: "button", class: "secondary", "aria-label": `Delete ${docName(doc)}`,
                                text: armed ? "Delete for good?" : "Delete" });
  button.addEventListener("click", async () => {
    // Two steps instead of a dialog: the first press asks, the second deletes.
    if (!armedDeletes.has(doc.doc_id)) {
      armedDeletes.add(doc.doc_id);
      button.textContent = "Delete for good?";
      return;
    }
    armedDeletes.delete(doc.doc_id);
    button.disabled = true;
    try {
      await api(`/v1/documents/${encodeURIComponent(doc.doc_id)}`, { method: "DELETE" });
      listStatus.textContent = `Deleted ${docName(doc)}.`;
    } catch (error) {
      listStatus.textContent = `Could not delete ${docName(doc)}: ${error.message}`;
    }
    refresh();
  });
  return el("td", {}, button);
}

function row(doc) {
  const status = el("td", { class: `status status-${doc.status}` }, statusLabel(doc.status));
  if (doc.status === "failed" && doc.reason) status.append(el("div", { class: "reason", text: doc.reason }));
  const warnings = doc.warnings.length
    ? el("td", {}, el("ul", { class: "warnings" }, doc.warnings.map((w) => el("li", { text: w }))))
    : el("td", { class: "muted", text: "none" });
  return el(
    "tr",
    { "data-doc-id": doc.doc_id },
    // Names are labels several documents may share: the id tells them apart.
    el("td", {}, el("a", { href: `/documents/${encodeURIComponent(doc.doc_id)}`, text: docName(doc) }),
      el("div", { class: "muted doc-id", text: doc.doc_id })),
    status,
    el("td", { text: doc.page_count || "" }),
    el("td", { text: doc.builder || "" }),
    warnings,
    deleteButton(doc),
  );
}

// One page of the listing and whether more follows (the API names the next page in a header).
async function listPage(limit, status) {
  const query = new URLSearchParams({ limit: String(limit) });
  if (status) query.set("status", status);
  const response = await fetch(`/v1/documents?${query}`, { headers: { accept: "application/json", ...authHeaders() } });
  checkAuthorized(response.status);
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return { docs: await response.json(), more: response.headers.has("X-Next-Cursor") };
}

async function refresh() {
  try {
    const { docs, more } = await listPage(shown, statusFilter.value);
    tbody.replaceChildren(...docs.map(row));
    for (const doc of docs) {
      const state = uploadStates.get(doc.doc_id);
      if (state && (doc.status === "ready" || doc.status === "failed")) {
        state.textContent = doc.status === "ready" ? `ready: ${doc.page_count} pages` : "indexing failed (reason below)";
        state.className = doc.status === "ready" ? "status-ready" : "error";
        uploadStates.delete(doc.doc_id);
      } else if (state) {
        state.textContent = statusLabel(doc.status);
      }
    }
    showMore.hidden = !more;
    const busy = docs.filter((d) => d.status === "uploaded" || d.status === "indexing").length;
    const which = statusFilter.value ? ` ${statusFilter.value}` : "";
    listStatus.textContent = docs.length
      ? `${more ? "The newest " : ""}${docs.length}${which} document${docs.length === 1 ? "" : "s"}` +
        `${busy ? `, ${busy} being indexed` : ""}.`
      : statusFilter.value ? `No${which} documents.` : "No documents yet: upload a document above.";
  } catch (error) {
    listStatus.textContent = `Could not list the documents: ${error.message}`;
  }
}

showMore.addEventListener("click", () => {
  shown = Math.min(shown + PAGE, 1000);
  refresh();
});
statusFilter.addEventListener("change", () => {
  shown = PAGE;
  refresh();
});

api("/openapi.json")
  .then((spec) => {
    canDelete = Boolean(spec.paths?.["/v1/documents/{doc_id}"]?.delete);
    if (canDelete) refresh();
  })
  .catch(() => {});
refresh();
setInterval(refresh, POLL_MS);
