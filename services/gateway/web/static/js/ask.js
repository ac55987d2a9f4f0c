// Ask: a conversation over the documents. Each question goes to the chat (a follow-up is
// completed from the one before it, and the question asked is shown); its answer streams in
// sentence by sentence, each citation opening the page viewer with the sentence highlighted on
// the cited page. Earlier turns move into the thread above, marked as earlier, so an answer never
// looks current while the next one is computed or after it failed. The chat's id is in the URL
// (?chat=ID): a link reopens it. The scope is "All documents" or the ones ticked, each shown
// with its card (issuer, type, period); the search mode waits under "Advanced".
import { KEY_NEEDED, api, cardLine, docName, el, pageLabels, pagesLabel, streamEvents } from "./common.js";
import { pageViewer } from "./viewer.js";

const form = document.getElementById("ask-form");
const scopeAll = document.getElementById("scope-all");
const scopeList = document.getElementById("scope-list");
const scopeNote = document.getElementById("scope-note");
const status = document.getElementById("ask-status");
const button = document.getElementById("ask-button");
const section = document.getElementById("answer");
const thread = document.getElementById("thread");
const asked = document.getElementById("answer-question");
const viewer = pageViewer();
let chatId = new URLSearchParams(location.search).get("chat");
let chatDocs = null; // the documents the open chat is over (null: not known yet)

const LISTED = 1000; // ready documents offered in the scope, newest first (the listing's largest page)

function scopeItem(doc) {
  const card = cardLine(doc.card);
  return el("li", {}, el("label", {},
    el("input", { type: "checkbox", name: "doc_ids", value: doc.doc_id }),
    el("span", {}, el("span", { class: "file-name", text: docName(doc) }),
      card ? el("span", { class: "card-line", text: ` — ${card}` }) : null)));
}

function ticked() {
  return [...scopeList.querySelectorAll("input:checked")].map((box) => box.value);
}

// "All documents" and the documents' boxes exclude each other: ticking a document unticks "All",
// and unticking the last one ticks it again.
function showScope() {
  const chosen = ticked();
  scopeAll.checked = !chosen.length;
  scopeNote.textContent = chosen.length
    ? `Asking ${chosen.length} document${chosen.length === 1 ? "" : "s"}.`
    : "Asking every ready document.";
}

scopeAll.addEventListener("change", () => {
  for (const box of scopeList.querySelectorAll("input:checked")) box.checked = false;
  showScope();
});
scopeList.addEventListener("change", showScope);

function tick(docIds) {
  for (const box of scopeList.querySelectorAll("input")) box.checked = docIds.includes(box.value);
  showScope();
}

async function loadDocuments() {
  try {
    const docs = await api(`/v1/documents?status=ready&limit=${LISTED}`);
    scopeList.replaceChildren(...docs.map(scopeItem));
    if (chatDocs) tick(chatDocs);
    else showScope();
    if (!docs.length) scopeNote.textContent = "No document is ready yet: upload one on the Documents page.";
  } catch (error) {
    scopeNote.textContent = error.status === 401 ? KEY_NEEDED : `Could not list the documents: ${error.message}`;
  }
}

// "[file, p. 4]" at once; "[file, p. 36 (PDF page 40)]" once the document's printed page
// labels are read (one request per document and page view).
function citationButton(citation, evidence) {
  const name = docName(citation);
  const page = citation.pages[0];
  const button = el("button", {
    type: "button",
    class: "citation",
    onclick: () => viewer.open({ docId: citation.doc_id, page, name, evidence }),
  });
  const nameIt = (labels) => {
    button.textContent = `[${name}, ${pagesLabel(citation.pages, labels)}]`;
    button.setAttribute("aria-label", `Open ${name} at ${pagesLabel([page], labels)}${evidence ? " with the sentence highlighted" : ""}`);
  };
  nameIt([]);
  pageLabels(citation.doc_id).then((labels) => labels.length && nameIt(labels));
  return button;
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

// "How it was found", from the facts the answer carries: an abstention or a failure has fewer,
// and a missing one is left out rather than printed as "null" or "?".
function howFound(result) {
  const stats = result.stats || null;
  const lines = [];
  if (result.mode) lines.push(`Search: ${result.mode}${result.mode_reason ? ` (${result.mode_reason})` : ""}.`);
  if (stats) {
    lines.push(`Sections visited: ${stats.nodes_visited ?? 0}, selected: ${stats.nodes_selected ?? 0}; documents considered: `
      + `${stats.documents_considered ?? 0}, shortlisted: ${stats.documents_shortlisted ?? 0}; references resolved: `
      + `${stats.references_resolved ?? 0}.`);
  }
  if (result.tokens_before != null && result.tokens_after != null) {
    lines.push(`Context: ${result.tokens_before} tokens, ${result.tokens_after} after compression.`);
  }
  const cited = [...new Set((result.citations || []).map((c) => `${docName(c)} ${pagesLabel(c.pages)}`))];
  if (cited.length) lines.push(`Cited: ${cited.join("; ")}.`);
  if (result.status === "failed" && result.failed_stage) lines.push(`Failed at: ${result.failed_stage}.`);
  if (!lines.length && !(result.path || []).length) lines.push("Nothing to show: the search did not report how it went.");
  return [...lines.map((text) => el("p", { text })), ...visitedSections(result.path || [])];
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
  const past = el("li", { class: "turn past" }, el("p", { class: "turn-label", text: "Earlier answer" }));
  for (const node of [asked, document.getElementById("answer-verdict"), document.getElementById("answer-text")]) {
    const copy = node.cloneNode(false);
    copy.removeAttribute("id");
    copy.append(...node.childNodes); // moved, all at once: their buttons keep their handlers
    past.append(copy);
  }
  thread.append(past);
  section.hidden = true;
}

// A model's answer as it writes it (`draft` events), shown from the end of the last sentence
// already checked: the checked sentences above stand for what came before.
const written = { text: "", shownFrom: 0 };

function showDraft() {
  const p = document.getElementById("answer-draft");
  if (!p) return; // a page from before drafts were shown
  const rest = written.text.slice(written.shownFrom).trim();
  p.textContent = rest;
  p.hidden = !rest;
}

function forgetDraft() {
  written.text = "";
  written.shownFrom = 0;
  showDraft();
}

// Where the checked `sentence` ends in the draft (after its citation), from `from` on.
function afterSentence(text, sentence, from) {
  const tail = sentence.replace(/[\s.!?]+$/, "").slice(-24);
  const at = tail ? text.indexOf(tail, from) : -1;
  if (at < 0) return from;
  const end = at + tail.length;
  return end + /^\s*(\[[^\]]*\]\s*)?[.!?]?\s*(\[[^\]]*\]\s*)?/.exec(text.slice(end))[0].length;
}

function render(result) {
  forgetDraft();
  section.hidden = false;
  section.removeAttribute("aria-busy");
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
  } else if (result.status === "pending") {
    verdict.textContent = "No answer yet: it took longer than the gateway waits. Ask again in a moment, "
      + "or open this conversation's link later to see it.";
  } else if (result.abstained) {
    verdict.textContent = "No answer: nothing in the documents supports one, so TreeRAG does not guess.";
  } else if (result.stated === false) {
    // The sentences below are what comes closest, not the figure asked for: said before them.
    verdict.textContent = "No passage states the figure asked for. The closest passages:";
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
  document.getElementById("answer-path").replaceChildren(...howFound(result));
  const rows = (result.timings?.stages || []).map((t) =>
    el("tr", {}, el("th", { scope: "row", text: t.stage }), el("td", { text: t.queued_ms.toFixed(1) }), el("td", { text: t.processing_ms.toFixed(1) })),
  );
  if (result.timings?.total_ms != null) {
    rows.push(el("tr", {}, el("th", { scope: "row", text: "total at the gateway" }), el("td", { text: "" }), el("td", { text: result.timings.total_ms.toFixed(1) })));
  }
  document.querySelector("#answer-timings tbody").replaceChildren(...rows);
}

// The answer panel emptied, saying `message`; `busy` while an answer is being computed.
function clearAnswer(message, busy = false) {
  forgetDraft();
  section.hidden = false;
  if (busy) section.setAttribute("aria-busy", "true");
  else section.removeAttribute("aria-busy");
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
    const query = await api(`/v1/queries/${encodeURIComponent(turn.query_id)}`);
    // A stored query a moment behind its turn: the turn is what is known.
    render(query.status === "pending" && turn.status !== "pending" ? { ...turn, citations: turn.citations || [] } : query);
  } catch {
    render({ ...turn, citations: turn.citations || [] });
  }
}

// Focus goes to the answer once it is there, unless the reader has moved on (to a citation of
// the streamed sentences, or the page viewer): only from the form or from nowhere.
function focusAnswer() {
  const at = document.activeElement;
  if (!at || at === document.body || form.contains(at)) section.focus();
}

async function ask(question, docIds, mode) {
  archive();
  clearAnswer("Searching the documents…", true);
  askedLine(question, "", "");
  const id = await openChat(docIds);
  let final = null;
  await streamEvents(`/v1/chats/${encodeURIComponent(id)}/messages`, { question, mode }, (name, data) => {
    if (name === "accepted") {
      askedLine(data.question, data.standalone, data.rewrite_reason);
    } else if (name === "routed") {
      const pages = data.pages.length;
      const docs = data.documents.length;
      document.getElementById("answer-verdict").textContent =
        `Reading ${pages} page${pages === 1 ? "" : "s"} of ${docs} document${docs === 1 ? "" : "s"}…`;
    } else if (name === "draft") {
      written.text = written.text.slice(0, data.offset) + data.text;
      written.shownFrom = Math.min(written.shownFrom, data.offset);
      document.getElementById("answer-verdict").textContent = "Writing the answer; each sentence is checked once written…";
      showDraft();
    } else if (name === "sentence") {
      document.getElementById("answer-verdict").textContent = "Checking the answer against its pages…";
      document.getElementById("answer-text").append(sentenceLine(data));
      written.shownFrom = afterSentence(written.text, data.text, written.shownFrom);
      showDraft();
    } else if (name === "turn") {
      final = showTurn(data);
    } else if (name === "error") {
      final = Promise.resolve();
      if (data.query_id && data.status) render({ ...data, citations: data.citations || [] });
      else clearAnswer(`The question could not be answered: ${data.detail || data.reason || "a stage failed"}.`);
    }
  });
  if (final) await final;
  else clearAnswer("The answer did not arrive: the connection ended. Ask again.");
  return Boolean(final);
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const question = document.getElementById("question").value.trim();
  if (!question) return;
  const mode = document.getElementById("mode").value;
  button.disabled = true;
  status.textContent = "";
  try {
    if (await ask(question, ticked(), mode)) document.getElementById("question").value = "";
  } catch (error) {
    // Refused before any answer (no key, a document gone): said where the answer would be.
    clearAnswer(`The question could not be asked: ${error.message}`);
  } finally {
    button.disabled = false;
    focusAnswer();
  }
});

// A chat's link (?chat=ID) shows its turns again: the earlier ones in the thread, the last as the answer.
async function reopen() {
  if (!chatId) return;
  try {
    const [chat, turns] = await Promise.all([api(`/v1/chats/${encodeURIComponent(chatId)}`),
      api(`/v1/chats/${encodeURIComponent(chatId)}/messages`)]);
    chatDocs = chat.doc_ids;
    tick(chatDocs);
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
