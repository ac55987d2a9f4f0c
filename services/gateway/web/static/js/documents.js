// Documents: upload several documents with per-file progress; the list polls the documents'
// status while any is being indexed and the tab is visible, and stops without a valid key.
import { KEY_NEEDED, api, authHeaders, cardLine, checkAuthorized, docName, el, refusal, statusLabel } from "./common.js";

const POLL_MS = 2000;
const PAGE = 50; // documents per page of the list, newest first
const dropzone = document.getElementById("dropzone");
const input = document.getElementById("file-input");
const uploads = document.getElementById("uploads");
const tbody = document.querySelector("#documents tbody");
const listStatus = document.getElementById("list-status");
const notice = document.getElementById("list-notice"); // what the user did: kept until the next action
const ARMED_MS = 8000; // a Delete pressed once asks for confirmation this long, then disarms
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
      notice.textContent = "";
      state.textContent = body.duplicate ? `already uploaded (${statusLabel(body.status)})` : "uploaded; indexing follows";
      if (!body.duplicate) uploadStates.set(body.doc_id, state);
      refresh();
    } else {
      state.textContent = `refused: ${refusal(request.status, body)}`;
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

// Documents whose Delete was pressed once, with the timer that disarms it: the list is redrawn
// while documents are indexed, and a redraw between the two presses must not disarm it.
const armedDeletes = new Map();
const redraws = new Map(); // doc id -> redraws its Delete cell in the list as drawn now

function disarm(docId) {
  clearTimeout(armedDeletes.get(docId));
  armedDeletes.delete(docId);
}

// Delete in two steps instead of a dialog: the first press asks "Delete X?" with Delete and
// Cancel beside it; unanswered, it disarms after ARMED_MS. The outcome stays in the notice
// until the next action (an upload, another Delete).
function deleteButton(doc) {
  if (!canDelete) return el("td");
  const name = docName(doc);
  const cell = el("td");
  const draw = () => {
    const hadFocus = cell.contains(document.activeElement);
    if (!armedDeletes.has(doc.doc_id)) {
      cell.replaceChildren(el("button", { type: "button", class: "secondary", "aria-label": `Delete ${name}`, text: "Delete",
        onclick: () => {
          notice.textContent = "";
          armedDeletes.set(doc.doc_id, setTimeout(() => {
            armedDeletes.delete(doc.doc_id);
            redraws.get(doc.doc_id)?.();
          }, ARMED_MS));
          draw();
        } }));
      if (hadFocus) cell.querySelector("button").focus();
      return;
    }
    cell.replaceChildren(el("div", { class: "confirm", role: "group", "aria-label": `Confirm deleting ${name}` },
      el("span", { class: "confirm-question", text: `Delete ${name}?` }),
      el("button", { type: "button", class: "secondary", "aria-label": `Delete ${name} for good`, text: "Delete",
        onclick: async (event) => {
          disarm(doc.doc_id);
          event.currentTarget.disabled = true;
          try {
            await api(`/v1/documents/${encodeURIComponent(doc.doc_id)}`, { method: "DELETE" });
            notice.textContent = `Deleted ${name}.`;
          } catch (error) {
            notice.textContent = `Could not delete ${name}: ${error.message}`;
          }
          refresh();
        } }),
      el("button", { type: "button", class: "quiet", "aria-label": `Cancel deleting ${name}`, text: "Cancel",
        onclick: () => { disarm(doc.doc_id); draw(); } }),
    ));
    if (hadFocus) cell.querySelector("button.quiet").focus(); // the safe answer: a second Enter keeps the document
  };
  redraws.set(doc.doc_id, draw);
  draw();
  return cell;
}

function row(doc) {
  // `data-label`: the column's name, shown before the value where the rows are cards (phones).
  const status = el("td", { class: `status status-${doc.status}`, "data-label": "Status" }, statusLabel(doc.status));
  if (doc.status === "failed" && doc.reason) status.append(el("div", { class: "reason", text: doc.reason }));
  const warnings = doc.warnings.length
    ? el("td", { "data-label": "Warnings" }, el("ul", { class: "warnings" }, doc.warnings.map((w) => el("li", { text: w }))))
    : el("td", { class: "muted", "data-label": "Warnings", text: "none" });
  return el(
    "tr",
    { "data-doc-id": doc.doc_id },
    // Names are labels several documents may share: the id tells them apart.
    el("td", {}, el("a", { href: `/documents/${encodeURIComponent(doc.doc_id)}`, text: docName(doc) }),
      cardLine(doc.card) ? el("div", { class: "card-line", text: cardLine(doc.card) }) : null,
      el("div", { class: "muted doc-id", text: doc.doc_id })),
    status,
    el("td", { "data-label": "Pages", text: doc.page_count || "" }),
    el("td", { "data-label": "Builder", text: doc.builder || "" }),
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
  if (!response.ok) {
    let body = null;
    try {
      body = await response.json();
    } catch {
      body = null;
    }
    const error = new Error(refusal(response.status, body));
    error.status = response.status;
    throw error;
  }
  return { docs: await response.json(), more: response.headers.has("X-Next-Cursor") };
}

let timer = null;
let refused = false; // the gateway refused the key: nothing to poll until one is entered

// Poll again only while something is being indexed and someone can see it.
function schedule(busy) {
  clearTimeout(timer);
  timer = null;
  if (busy && !refused && document.visibilityState === "visible") timer = setTimeout(refresh, POLL_MS);
}

document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible" && !timer) refresh();
});

function controlName(control) {
  return control.getAttribute("aria-label") || control.textContent;
}

async function refresh() {
  let busy = uploadStates.size > 0;
  try {
    const { docs, more } = await listPage(shown, statusFilter.value);
    // A redraw while documents are indexed keeps the keyboard where it was.
    const focused = tbody.contains(document.activeElement) ? document.activeElement : null;
    const where = focused && { doc: focused.closest("tr")?.dataset.docId, label: controlName(focused) };
    redraws.clear();
    tbody.replaceChildren(...docs.map(row));
    if (where) {
      [...tbody.querySelectorAll("a, button")]
        .find((e) => e.closest("tr").dataset.docId === where.doc && controlName(e) === where.label)?.focus();
    }
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
    const indexing = docs.filter((d) => d.status === "uploaded" || d.status === "indexing").length;
    busy = busy || indexing > 0;
    const which = statusFilter.value ? ` ${statusFilter.value}` : "";
    listStatus.textContent = docs.length
      ? `${more ? "The newest " : ""}${docs.length}${which} document${docs.length === 1 ? "" : "s"}` +
        `${indexing ? `, ${indexing} being indexed` : ""}.`
      : statusFilter.value ? `No${which} documents.` : "No documents yet: upload a document above.";
  } catch (error) {
    refused = error.status === 401;
    listStatus.textContent = refused ? KEY_NEEDED : `Could not list the documents: ${error.message}`;
  }
  schedule(busy);
}

showMore.addEventListener("click", () => {
  shown = Math.min(shown + PAGE, 1000);
  refresh();
});
statusFilter.addEventListener("change", () => {
  shown = PAGE;
  refresh();
});

// The list is drawn once the API description says whether documents can be deleted.
api("/openapi.json")
  .then((spec) => {
    canDelete = Boolean(spec.paths?.["/v1/documents/{doc_id}"]?.delete);
  })
  .catch(() => {})
  .finally(refresh);
