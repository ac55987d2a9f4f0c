// Ask: question, document filter and mode; the answer sentence by sentence, each citation opening
// the page viewer with the sentence highlighted on the cited page.
import { api, docName, el, pagesLabel } from "./common.js";
import { pageViewer } from "./viewer.js";

const form = document.getElementById("ask-form");
const filter = document.getElementById("doc-filter");
const status = document.getElementById("ask-status");
const button = document.getElementById("ask-button");
const section = document.getElementById("answer");
const viewer = pageViewer();

async function loadDocuments() {
  try {
    const docs = await api("/v1/documents?status=ready");
    filter.replaceChildren(...docs.map((d) => el("option", { value: d.doc_id, text: docName(d) })));
    if (!docs.length) status.textContent = "No document is ready yet: upload one on the Documents page.";
  } catch (error) {
    status.textContent = `Could not list the documents: ${error.message}`;
  }
}

function citationButton(citation, evidence) {
  const name = docName(citation);
  const label = `[${name}, ${pagesLabel(citation.pages)}]`;
  return el("button", {
    type: "button",
    class: "citation",
    "aria-label": `Open ${name} at page ${citation.pages[0]}${evidence ? " with the sentence highlighted" : ""}`,
    onclick: () => viewer.open({ docId: citation.doc_id, page: citation.pages[0], name, evidence }),
    text: label,
  });
}

function confidenceWords(confidence) {
  const percent = `${Math.round(confidence * 100)} %`;
  if (confidence >= 0.7) return `Well supported by the cited pages (confidence ${percent}).`;
  if (confidence >= 0.4) return `Partly supported by the cited pages (confidence ${percent}): check the citations.`;
  return `Weakly supported (confidence ${percent}): read the cited pages before relying on it.`;
}

const REACHED_BY = { reference: " (named by a reference)", recovery: " (recovered: no section passed the threshold)" };

// The sections the navigator entered, in order; the ones kept as evidence marked in words, not
// only by style, so screen readers say it too.
function visitedSections(path) {
  if (!path.length) return [];
  const documents = new Set(path.map((section) => section.doc_id)).size;
  const items = path.map((section) =>
    el(
      "li",
      { class: section.selected ? "visited selected" : "visited" },
      documents > 1 ? `${docName(section)}: ` : "",
      el("span", { class: "visited-title", text: section.title || section.node_id }),
      ` (${pagesLabel(section.page_start === section.page_end ? [section.page_start] : [section.page_start, section.page_end])})`,
      REACHED_BY[section.via] || "",
      section.selected ? el("strong", { class: "visited-mark", text: " selected" }) : null,
    ),
  );
  return [
    el("p", { id: "answer-path-heading", text: `Path through the sections, in the order visited${documents > 1 ? ` (${documents} documents)` : ""}:` }),
    el("ol", { id: "answer-path-list", class: "visited-path", "aria-labelledby": "answer-path-heading" }, items),
  ];
}

function render(result) {
  section.hidden = false;
  const verdict = document.getElementById("answer-verdict");
  const text = document.getElementById("answer-text");
  const warnings = document.getElementById("answer-warnings");
  text.replaceChildren();
  if (result.status === "failed") {
    verdict.textContent = `The question could not be answered: ${result.reason || "a stage failed"}.`;
  } else if (result.abstained) {
    verdict.textContent = "No answer: nothing in the documents supports one, so TreeRAG does not guess.";
  } else {
    verdict.textContent = confidenceWords(result.confidence ?? 0);
  }
  if (result.sentences && result.sentences.length) {
    for (const sentence of result.sentences) {
      const verdict = sentence.verdict || (sentence.grounded ? "supported" : "unsupported");
      const p = el("p", { class: `sentence ${verdict}` }, sentence.text, " ");
      if (sentence.citation) {
        // The verifier's evidence window is the page text that supports the sentence: highlight
        // that (on its page) rather than the answer's wording, when there is one.
        const window = sentence.window && sentence.window.text ? sentence.window : null;
        const citation = window && window.page ? { ...sentence.citation, pages: [window.page] } : sentence.citation;
        p.append(citationButton(citation, window ? window.text : sentence.text));
      }
      if (verdict === "contradicted") {
        p.append(el("span", { class: "error", text: ` (the cited page says otherwise${sentence.reason ? `: ${sentence.reason}` : ""})` }));
      } else if (verdict === "unsupported") {
        p.append(el("span", { class: "muted", text: " (not supported by its page)" }));
      }
      text.append(p);
    }
  } else if (result.answer) {
    text.append(el("p", { text: result.answer }));
    if (result.citations.length) text.append(el("p", {}, "Sources: ", result.citations.map((c) => citationButton(c, ""))));
  }
  warnings.replaceChildren(...(result.warnings || []).map((w) => el("li", { text: w })));
  const path = document.getElementById("answer-path");
  const stats = result.stats || {};
  const cited = [...new Set((result.citations || []).map((c) => `${docName(c)} ${pagesLabel(c.pages)}`))];
  path.replaceChildren(
    el("p", { text: `Search: ${result.mode || "?"}${result.mode_reason ? ` (${result.mode_reason})` : ""}.` }),
    el("p", {
      text: `Sections visited: ${stats.nodes_visited ?? 0}, selected: ${stats.nodes_selected ?? 0}; documents considered: ${stats.documents_considered ?? 0}, shortlisted: ${stats.documents_shortlisted ?? 0}; references resolved: ${stats.references_resolved ?? 0}.`,
    }),
    el("p", { text: `Context: ${result.tokens_before ?? "?"} tokens, ${result.tokens_after ?? "?"} after compression.` }),
    cited.length ? el("p", { text: `Cited: ${cited.join("; ")}.` }) : null,
    ...visitedSections(result.path || []),
  );
  const rows = (result.timings?.stages || []).map((t) =>
    el("tr", {}, el("th", { scope: "row", text: t.stage }), el("td", { text: t.queued_ms.toFixed(1) }), el("td", { text: t.processing_ms.toFixed(1) })),
  );
  if (result.timings?.total_ms != null) {
    rows.push(el("tr", {}, el("th", { scope: "row", text: "total at the gateway" }), el("td", { text: "" }), el("td", { text: result.timings.total_ms.toFixed(1) })));
  }
  document.querySelector("#answer-timings tbody").replaceChildren(...rows);
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const question = document.getElementById("question").value.trim();
  if (!question) return;
  const docIds = [...filter.selectedOptions].map((o) => o.value);
  const mode = document.getElementById("mode").value;
  button.disabled = true;
  status.textContent = "Searching the documents…";
  try {
    const result = await api("/v1/query", { method: "POST", body: JSON.stringify({ question, doc_ids: docIds, mode }) });
    status.textContent = "";
    render(result);
  } catch (error) {
    if (error.body && error.body.query_id) {
      status.textContent = "";
      render(error.body);
    } else {
      status.textContent = `The question could not be asked: ${error.message}`;
    }
  } finally {
    button.disabled = false;
  }
});

loadDocuments();
