// The page viewer: the page image rendered by the gateway, evidence boxes over it, page text,
// previous / next and jump to page.
import { api, authHeaders, checkAuthorized, refusal } from "./common.js";

const SCALE = 1.5;

export class PageViewer {
  constructor(root) {
    this.root = root;
    this.image = root.querySelector("#viewer-image");
    this.boxes = root.querySelector("#viewer-boxes");
    this.layer = root.querySelector("#viewer-text-layer");
    this.title = root.querySelector("#viewer-title");
    this.input = root.querySelector("#viewer-page");
    this.count = root.querySelector("#viewer-count");
    this.note = root.querySelector("#viewer-evidence");
    this.text = root.querySelector("#viewer-text");
    this.textPanel = root.querySelector("#viewer-text-panel");
    this.frame = root.querySelector(".page-frame");
    this.state = null;
    root.querySelector("#viewer-prev").addEventListener("click", () => this.go(this.state.page - 1));
    root.querySelector("#viewer-next").addEventListener("click", () => this.go(this.state.page + 1));
    root.querySelector("#viewer-close").addEventListener("click", () => this.close());
    this.input.addEventListener("change", () => this.go(Number(this.input.value)));
    this.textPanel.addEventListener("toggle", () => this.textPanel.open && !this.state.textOnly && this.loadText());
    root.addEventListener("keydown", (event) => {
      if (event.target === this.input) return;
      if (event.key === "ArrowLeft") this.go(this.state.page - 1);
      else if (event.key === "ArrowRight") this.go(this.state.page + 1);
      else if (event.key === "Escape") this.close();
    });
  }

  // docId, page, pageCount (optional), name (shown), evidence (text to highlight on `page`).
  async open({ docId, page, pageCount, name, evidence }) {
    this.opener = document.activeElement;
    // DOCX, HTML, Markdown and text documents have pages of text only: no image to show.
    let textOnly = false;
    try {
      const doc = await api(`/v1/documents/${encodeURIComponent(docId)}`);
      pageCount = pageCount || doc.page_count;
      textOnly = (doc.format || "pdf") !== "pdf";
    } catch {
      pageCount = pageCount || null;
    }
    this.state = { docId, page, pageCount, name: name || docId, evidence: evidence || "", evidencePage: page, textOnly };
    this.root.hidden = false;
    this.input.max = pageCount || "";
    this.show();
    this.root.scrollIntoView({ block: "start" });
    this.title.setAttribute("tabindex", "-1");
    this.title.focus();
  }

  close() {
    this.root.hidden = true;
    if (this.opener && this.opener.focus) this.opener.focus();
  }

  go(page) {
    if (!this.state || !Number.isInteger(page) || page < 1) return;
    if (this.state.pageCount && page > this.state.pageCount) return;
    this.state.page = page;
    this.show();
  }

  async show() {
    const { docId, page, pageCount, name } = this.state;
    const id = encodeURIComponent(docId);
    this.title.textContent = `${name}, page ${page}`;
    this.input.value = page;
    this.count.textContent = pageCount ? `of ${pageCount}` : "";
    this.boxes.replaceChildren();
    this.layer.replaceChildren();
    this.note.textContent = "";
    this.text.textContent = "";
    this.frame.hidden = this.state.textOnly;
    const evidence = page === this.state.evidencePage ? this.state.evidence : "";
    if (this.state.textOnly) {
      this.textPanel.open = true;
      this.loadText(evidence);
      return;
    }
    this.image.alt = `Page ${page} of ${name}`;
    // The text layer is asked for first: it is read in tens of milliseconds, while a dense page
    // can take a second to render, and the gateway reads one PDF page at a time.
    this.loadTextLayer(id, page);
    this.loadImage(`/v1/documents/${id}/pages/${page}/image?scale=${SCALE}`, page);
    if (this.textPanel.open) this.loadText();
    if (!evidence) return;
    try {
      const found = await api(`/v1/documents/${id}/pages/${page}/boxes?text=${encodeURIComponent(evidence)}`);
      if (this.state.page !== page) return;
      for (const box of found.boxes) {
        const mark = document.createElement("div");
        mark.className = "box";
        mark.style.left = `${box.left * 100}%`;
        mark.style.top = `${box.top * 100}%`;
        mark.style.width = `${box.width * 100}%`;
        mark.style.height = `${box.height * 100}%`;
        this.boxes.append(mark);
      }
      this.note.textContent = {
        exact: "The cited passage is highlighted.",
        closest: "The closest passage on this page is highlighted (the answer words it differently).",
        none: "The cited words were not found on this page.",
      }[found.match];
    } catch (error) {
      this.note.textContent = `Could not highlight the evidence: ${error.message}`;
    }
  }

  // The image is fetched with the API key (an <img src> cannot send it) and shown from a blob.
  async loadImage(url, page) {
    let blob;
    try {
      const response = await fetch(url, { headers: authHeaders() });
      checkAuthorized(response.status);
      if (!response.ok) throw new Error(refusal(response.status));
      blob = await response.blob();
    } catch (error) {
      this.note.textContent = `Could not load the page image: ${error.message}`;
      return;
    }
    if (this.state.page !== page) return;
    if (this.imageUrl) URL.revokeObjectURL(this.imageUrl);
    this.imageUrl = URL.createObjectURL(blob);
    this.image.dataset.source = url; // what is shown, for a reader of the page (src is the blob's)
    this.image.src = this.imageUrl;
  }

  // The page's text as transparent words over the image, where they are printed: it can be
  // selected and copied as on the PDF, a line break after each line. Laid out in one pass with no
  // layout read: a word's font size and its stretch both follow the frame's width (cqw), so its
  // stretch is the ratio of its printed width to its width in the layer's font, measured once on
  // a canvas, and holds at any zoom.
  async loadTextLayer(id, page) {
    let layer;
    try {
      layer = await api(`/v1/documents/${id}/pages/${page}/text-layer`);
    } catch {
      return;
    }
    if (this.state.page !== page) return;
    const measure = textMeasure();
    const parts = [];
    for (const line of layer.lines) {
      line.words.forEach((word, k) => {
        const span = document.createElement("span");
        span.textContent = k < line.words.length - 1 ? `${word.text} ` : word.text;
        const size = word.box.height * layer.aspect; // font size as a share of the frame's width
        span.style.left = `${word.box.left * 100}%`;
        span.style.top = `${word.box.top * 100}%`;
        span.style.fontSize = `${size * 100}cqw`;
        const natural = measure(word.text) * size; // the word's width in the layer's font, same share
        if (natural > 0) span.style.transform = `scaleX(${word.box.width / natural})`;
        parts.push(span);
      });
      parts.push(document.createElement("br"));
    }
    this.layer.replaceChildren(...parts);
  }

  // The page's text; `evidence` found in it is marked (text-only pages have no image to box).
  async loadText(evidence = "") {
    const { docId, page } = this.state;
    try {
      const body = await api(`/v1/documents/${encodeURIComponent(docId)}/pages/${page}`);
      if (this.state.page !== page) return;
      const found = evidence ? findLoosely(body.text, evidence) : null;
      if (!found) {
        this.text.textContent = body.text;
        if (evidence) this.note.textContent = "The cited words were not found on this page.";
        return;
      }
      const mark = document.createElement("mark");
      mark.textContent = found[0];
      this.text.replaceChildren(body.text.slice(0, found.index), mark, body.text.slice(found.index + found[0].length));
      this.note.textContent = "The cited passage is marked in the page text.";
    } catch (error) {
      this.text.textContent = `No text: ${error.message}`;
    }
  }
}

// `needle` in `text`, any run of white space matching any other (page text keeps line breaks).
function findLoosely(text, needle) {
  const words = needle.trim().split(/\s+/).map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return words.length && words[0] ? new RegExp(words.join("\\s+"), "i").exec(text) : null;
}

export function pageViewer() {
  const root = document.getElementById("viewer");
  return root ? new PageViewer(root) : null;
}

// Width of a text in the text layer's font, per unit of font size (a canvas measures it without
// laying out the page). One canvas serves every page.
const TEXT_LAYER_FONT = "sans-serif";
let measuringContext = null;
function textMeasure() {
  if (!measuringContext) {
    measuringContext = document.createElement("canvas").getContext("2d");
    measuringContext.font = `100px ${TEXT_LAYER_FONT}`;
  }
  return (text) => measuringContext.measureText(text).width / 100;
}
