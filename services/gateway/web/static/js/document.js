// Document: its facts, warnings and the section tree; a section opens its first page.
import { KEY_NEEDED, api, docName, el, pagesLabel, periodText, statusLabel } from "./common.js";
import { pageViewer } from "./viewer.js";

const root = document.getElementById("document");
const docId = root.dataset.docId;
const viewer = pageViewer();
const treeStatus = document.getElementById("tree-status");

function fact(list, name, value) {
  list.append(el("dt", { text: name }), el("dd", { text: value }));
}

// What the card read at indexing; facts it could not read are left out.
function cardFacts(list, card) {
  if (card.doc_type && card.doc_type !== "unknown") fact(list, "Type", card.doc_type);
  if (card.issuer) fact(list, "Issuer", card.issuer);
  if (card.subject) fact(list, "Subject", card.subject);
  const period = periodText(card.period);
  if (period) fact(list, "Period", period);
  if (card.language) fact(list, "Language", card.language);
  const labels = card.page_labels.filter((l) => l);
  if (labels.length) fact(list, "Printed pages", `${labels[0]} … ${labels[labels.length - 1]}`);
}

function node(n, doc) {
  const labels = doc.card?.page_labels || [];
  const range = pagesLabel([n.page_start, n.page_end], labels);
  const open = el(
    "button",
    {
      type: "button",
      class: "node-title",
      "aria-label": `${n.title}, ${range}${n.verified ? ", verified" : ""}: open ${pagesLabel([n.page_start], labels)}`,
      onclick: () => viewer.open({ docId: doc.doc_id, page: n.page_start, pageCount: doc.page_count, name: docName(doc) }),
    },
    el("span", { text: n.title }),
    " ",
    el("span", { class: "range", text: range }),
    n.verified ? el("span", { class: "verified", title: "title found on its first page", text: " ✓" }) : null,
  );
  const summary = n.summary ? el("p", { class: "node-summary", text: n.summary }) : null;
  if (!n.children.length) return el("li", {}, el("div", { class: "node-row" }, el("span", { class: "toggle-space" }), open), summary);
  // A disclosure button beside the section's own button (never one inside the other), so each
  // is reached and named on its own.
  const expanded = n.level < 2;
  const children = el("ul", { id: `children-${n.id}`, hidden: !expanded }, n.children.map((c) => node(c, doc)));
  const toggle = el("button", {
    type: "button", class: "toggle", "aria-expanded": String(expanded), "aria-controls": children.id,
    "aria-label": `${expanded ? "Hide" : "Show"} the ${n.children.length} sections of ${n.title}`,
    text: expanded ? "▾" : "▸",
  });
  toggle.addEventListener("click", () => {
    const show = children.hidden;
    children.hidden = !show;
    toggle.setAttribute("aria-expanded", String(show));
    toggle.setAttribute("aria-label", `${show ? "Hide" : "Show"} the ${n.children.length} sections of ${n.title}`);
    toggle.textContent = show ? "▾" : "▸";
  });
  return el("li", {}, el("div", { class: "node-row" }, toggle, open), summary, children);
}

async function load() {
  timer = null;
  waiting = false;
  let doc;
  try {
    doc = await api(`/v1/documents/${encodeURIComponent(docId)}`);
  } catch (error) {
    // Without a valid key every document is out of reach: say so, not that it does not exist.
    document.getElementById("doc-title").textContent = error.status === 401 ? "Enter your API key" : "Document not found";
    treeStatus.textContent = error.status === 401 ? KEY_NEEDED : error.message;
    return;
  }
  document.getElementById("doc-title").textContent = docName(doc);
  document.title = `${docName(doc)} · TreeRAG`;
  const facts = document.getElementById("doc-facts");
  facts.replaceChildren();
  if (doc.title && doc.title !== docName(doc)) fact(facts, "Title", doc.title);
  fact(facts, "Status", statusLabel(doc.status) + (doc.reason ? `: ${doc.reason}` : ""));
  fact(facts, "Pages", String(doc.page_count));
  if (doc.builder) fact(facts, "Tree built from", doc.builder);
  if (doc.card) cardFacts(facts, doc.card);
  const warnings = document.getElementById("doc-warnings");
  warnings.replaceChildren(...doc.warnings.map((w) => el("li", { text: w })));
  if (doc.status !== "ready") {
    treeStatus.textContent = doc.status === "failed" ? "No tree: indexing failed." : "Indexing… this page updates when the tree is ready.";
    // Asked again while it is indexed and someone can see it; a hidden tab asks when shown.
    waiting = doc.status !== "failed";
    if (waiting && document.visibilityState === "visible") timer = setTimeout(load, 2000);
    return;
  }
  try {
    const tree = await api(`/v1/documents/${encodeURIComponent(docId)}/tree`);
    document.getElementById("tree").replaceChildren(el("ul", { class: "outline" }, tree.nodes.map((n) => node(n, doc))));
    treeStatus.textContent = "";
  } catch (error) {
    treeStatus.textContent = `No tree: ${error.message}`;
  }
}

let waiting = false; // the document is being indexed
let timer = null; // the next ask, when one is due
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible" && waiting && !timer) load();
});
load();
