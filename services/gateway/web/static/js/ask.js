// Ask: a conversation over the documents. Each question goes to the chat (a follow-up is
// completed from the one before it, and the question asked is shown); its answer streams in
// sentence by sentence, each citation opening the page viewer with the sentence highlighted on
// the cited page. Earlier turns move into the thread above, so an answer never looks current
// while the next one is computed. The chat's id is in the URL (?chat=ID): a link reopens it.
import { api, docName, el, pagesLabel, streamEvents } from "./common.js";
import { pageViewer } from "./viewer.js";

const form = document.getElementById("ask-form");
const filter = document.getElementById("doc-filter");
const status = document.getElementById("ask-status");
const button = document.getElementById("ask-button");
const section = document.getElementById("answer");
const thread = document.getElementById("thread");
const asked = document.getElementById("answer-question");
const viewer = pageViewer();
let chatId = new URLSearchParams(location.search).get("chat");
let chatDocs = null; // the documents the open chat is over (null: not known yet)

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

// The calibrated confidence is the probability that the answer is right, said in the words the
// verifier gives it; an answer without them (an uncalibrated answerer) reports its support.
const ASSESSED = {
  "likely right": (percent) => `Likely right (${percent} chance).`,
  "check the page": (percent) => `Check the cited page before relying on it (${percent} chance it is right).`,
  "probably not answered": (percent) => `Probably not answered (${percent} chance it is right): read the cited pages.`,
};

function confidenceWords(confidence, assessment) {
  const percent = `${Math.round(confidence * 100)} %`;
  if (ASSESSED[assessment]) return ASSESSED[assessment](percent);
  if (confidence >= 0.7) return `Well supported by the cited pages (support ${percent}).`;
  if (confidence >= 0.4) return `Partly supported by the cited pages (support ${percent}): check the citations.`;
  return `Weakly supported (support ${percent}): read the cited pages before relying on it.`;
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

function sentenceLine(sentence) {
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
  return p;
}

function askedLine(question, standalone, reason) {
  asked.replaceChildren(el("strong", { text: "You asked: " }), question);
  if (reason && standalone && standalone !== question) {
    asked.append(el("br"), el("span", { class: "muted", text: "Asked as: " }), standalone);
  }
}

// The turn on screen goes into the thread, as a past turn: its question, how it was asked,
// and its sentences with their citations (no ids: those belong to the current answer).
function archive() {
  if (section.hidden) return;
  const past = el("li", { class: "turn past" });
  for (const node of [asked, document.getElementById("answer-verdict"), document.getElementById("answer-text")]) {
    const copy = node.cloneNode(false);
    copy.removeAttribute("id");
    for (const child of node.childNodes) copy.append(child); // moved: their buttons keep their handlers
    past.append(copy);
  }
  thread.append(past);
  section.hidden = true;
}

function render(result) {
  section.hidden = false;
  const verdict = document.getElementById("answer-verdict");
  const text = document.getElementById("answer-text");
  const warnings = document.getElementById("answer-warnings");
  // The sentences streamed in already stand (a reader may be on one of their citations): they
  // are drawn again only when the final answer holds other ones.
  const streamed = text.querySelectorAll(".sentence").length;
  const keep = streamed > 0 && streamed === (result.sentences || []).length;
  if (!keep) text.replaceChildren();
  if (result.status === "failed") {
    verdict.textContent = `The question could not be answered: ${result.reason || "a stage failed"}.`;
  } else if (result.abstained) {
    verdict.textContent = "No answer: nothing in the documents supports one, so TreeRAG does not guess.";
  } else {
    verdict.textContent = confidenceWords(result.confidence ?? 0, result.assessment);
  }
  if (keep) {
    // as streamed
  } else if (result.sentences && result.sentences.length) {
    for (const sentence of result.sentences) text.append(sentenceLine(sentence));
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

function clearAnswer(message) {
  section.hidden = false;
  document.getElementById("answer-verdict").textContent = message;
  document.getElementById("answer-text").replaceChildren();
  document.getElementById("answer-warnings").replaceChildren();
  document.getElementById("answer-path").replaceChildren();
  document.querySelector("#answer-timings tbody").replaceChildren();
}

async function openChat(docIds) {
  const same = chatDocs !== null && chatDocs.length === docIds.length && docIds.every((d) => chatDocs.includes(d));
  if (chatId && (same || chatDocs === null && !docIds.length)) return chatId;
  const chat = await api("/v1/chats", { method: "POST", body: JSON.stringify({ doc_ids: docIds }) });
  chatId = chat.chat_id;
  chatDocs = chat.doc_ids;
  thread.replaceChildren();
  history.replaceState(null, "", `/ask?chat=${encodeURIComponent(chatId)}`);
  return chatId;
}

// The whole response of a finished turn (timings, path), from its stored query.
async function showTurn(turn) {
  try {
    render(await api(`/v1/queries/${encodeURIComponent(turn.query_id)}`));
  } catch {
    render({ ...turn, citations: turn.citations || [] });
  }
}

async function ask(question, docIds, mode) {
  archive();
  const id = await openChat(docIds);
  clearAnswer("Searching the documents…");
  askedLine(question, "", "");
  let finished = false;
  await streamEvents(`/v1/chats/${encodeURIComponent(id)}/messages`, { question, mode }, (name, data) => {
    if (name === "accepted") {
      askedLine(data.question, data.standalone, data.rewrite_reason);
    } else if (name === "sentence") {
      document.getElementById("answer-verdict").textContent = "Checking the answer against its pages…";
      document.getElementById("answer-text").append(sentenceLine(data));
    } else if (name === "turn") {
      finished = true;
      showTurn(data);
    } else if (name === "error") {
      finished = true;
      if (data.query_id && data.status) render({ ...data, citations: data.citations || [] });
      else clearAnswer(`The question could not be answered: ${data.detail || data.reason || "a stage failed"}.`);
    }
  });
  if (!finished) clearAnswer("The answer did not arrive: the connection ended. Ask again.");
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const question = document.getElementById("question").value.trim();
  if (!question) return;
  const docIds = [...filter.selectedOptions].map((o) => o.value);
  const mode = document.getElementById("mode").value;
  button.disabled = true;
  status.textContent = "";
  try {
    await ask(question, docIds, mode);
    document.getElementById("question").value = "";
  } catch (error) {
    status.textContent = `The question could not be asked: ${error.message}`;
  } finally {
    button.disabled = false;
  }
});

// A chat's link (?chat=ID) shows its turns again: the earlier ones in the thread, the last as the answer.
async function reopen() {
  if (!chatId) return;
  try {
    const [chat, turns] = await Promise.all([api(`/v1/chats/${encodeURIComponent(chatId)}`),
      api(`/v1/chats/${encodeURIComponent(chatId)}/messages`)]);
    chatDocs = chat.doc_ids;
    for (const turn of turns) {
      archive();
      clearAnswer("");
      askedLine(turn.question, turn.standalone, turn.rewrite_reason);
      await showTurn(turn);
    }
  } catch (error) {
    status.textContent = `This conversation cannot be opened (${error.message}); ask to start a new one.`;
    chatId = null;
    history.replaceState(null, "", "/ask");
  }
}

reopen();
loadDocuments();
