// The page viewer: the page image rendered by the gateway as many pixels wide as it is shown,
// evidence boxes over it, its text laid over it for selection, page text below; previous /
// next, jump to page, zoom by buttons, keys, Ctrl + wheel and pinch. Beside the page that opened
// it on wide screens, over it on narrow ones (CSS); its keys work wherever focus is inside it.
import { api, authHeaders, checkAuthorized, documentDetail, pagesLabel, refusal } from "./common.js";

// Zoom is the page's width as a share of the viewer's width ("Fit width" is 1).
const ZOOM_STEPS = [0.5, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 4];
const MIN_ZOOM = ZOOM_STEPS[0];
const MAX_ZOOM = ZOOM_STEPS[ZOOM_STEPS.length - 1];
// The image is asked for in widths rounded up to this many pixels, so that nearly the same
// width is one cached image, and no wider than the gateway renders (its `width` bound).
const WIDTH_STEP = 256;
const MAX_WIDTH = 8000;
// A zoom or resize is followed by a sharper image only once it has paused this long.
const SHARPEN_MS = 150;

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
    this.scroller = root.querySelector("#viewer-scroll");
    this.frame = root.querySelector(".page-frame");
    this.zoomShown = root.querySelector("#viewer-zoom");
    this.state = null;
    this.zoom = 1;
    this.shownWidth = 0; // pixels wide of the image shown for the current page
    this.imageAsked = 0; // the latest image request: an earlier one answering late is dropped
    this.openings = 0;
    root.querySelector("#viewer-prev").addEventListener("click", () => this.go(this.state.page - 1));
    root.querySelector("#viewer-next").addEventListener("click", () => this.go(this.state.page + 1));
    root.querySelector("#viewer-close").addEventListener("click", () => this.close());
    root.querySelector("#viewer-zoom-in").addEventListener("click", () => this.step(1));
    root.querySelector("#viewer-zoom-out").addEventListener("click", () => this.step(-1));
    root.querySelector("#viewer-fit").addEventListener("click", () => this.setZoom(1));
    this.input.addEventListener("change", () => this.go(Number(this.input.value)));
    this.textPanel.addEventListener("toggle", () => this.textPanel.open && !this.state.textOnly && this.loadText());
    root.addEventListener("keydown", (event) => this.key(event));
    this.scroller.addEventListener("wheel", (event) => {
      if (!event.ctrlKey) return; // a trackpad's pinch arrives as Ctrl + wheel
      event.preventDefault();
      this.setZoom(this.zoom * Math.exp(-event.deltaY / 300), this.pointIn(event.clientX, event.clientY));
    }, { passive: false });
    this.pinchable();
    // The viewer's width changes with the window (and the column beside it): sharpen to it.
    new ResizeObserver(() => this.sharpenSoon()).observe(this.scroller);
    // Narrow screens show the viewer over the page: what it covers is out of reach meanwhile.
    matchMedia("(max-width: 1099.98px)").addEventListener("change", () => this.coverPage());
  }

  key(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.closest("input, textarea, select")) {
      if (event.key === "Escape") this.close();
      return;
    }
    const actions = {
      ArrowLeft: () => this.go(this.state.page - 1),
      ArrowRight: () => this.go(this.state.page + 1),
      "+": () => this.step(1),
      "=": () => this.step(1),
      "-": () => this.step(-1),
      0: () => this.setZoom(1),
      Escape: () => this.close(),
    };
    const action = actions[event.key];
    if (!action || !this.state) return;
    event.preventDefault();
    action();
  }

  // Two fingers apart or together zoom about the point between them; one finger scrolls.
  pinchable() {
    let pinch = null;
    const spread = (touches) => Math.hypot(touches[0].clientX - touches[1].clientX, touches[0].clientY - touches[1].clientY);
    this.scroller.addEventListener("touchstart", (event) => {
      if (event.touches.length === 2) pinch = { spread: spread(event.touches) || 1, zoom: this.zoom };
    }, { passive: true });
    this.scroller.addEventListener("touchmove", (event) => {
      if (!pinch || event.touches.length !== 2) return;
      event.preventDefault();
      const [a, b] = event.touches;
      this.setZoom(pinch.zoom * (spread(event.touches) / pinch.spread),
        this.pointIn((a.clientX + b.clientX) / 2, (a.clientY + b.clientY) / 2));
    }, { passive: false });
    const end = (event) => {
      if (event.touches.length < 2) pinch = null;
    };
    this.scroller.addEventListener("touchend", end);
    this.scroller.addEventListener("touchcancel", end);
  }

  pointIn(clientX, clientY) {
    const area = this.scroller.getBoundingClientRect();
    return { x: clientX - area.left, y: clientY - area.top };
  }

  step(direction) {
    const next = direction > 0 ? ZOOM_STEPS.find((z) => z > this.zoom + 1e-6) : [...ZOOM_STEPS].reverse().find((z) => z < this.zoom - 1e-6);
    if (next) this.setZoom(next);
  }

  // The frame's width is the zoom times the viewer's: boxes and text layer are laid out in
  // shares of it, so they follow with no layout of their own. `anchor` (a point in the
  // viewer, its middle by default) stays over the same place of the page.
  setZoom(value, anchor = null) {
    const zoom = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, Math.round(value * 100) / 100));
    if (zoom === this.zoom) return;
    const area = this.scroller;
    const at = anchor || { x: area.clientWidth / 2, y: area.clientHeight / 2 };
    const x = (area.scrollLeft + at.x) / this.zoom;
    const y = (area.scrollTop + at.y) / this.zoom;
    this.zoom = zoom;
    this.frame.style.width = `${zoom * 100}%`;
    area.scrollLeft = x * zoom - at.x;
    area.scrollTop = y * zoom - at.y;
    this.zoomShown.textContent = `${Math.round(zoom * 100)} %`;
    this.sharpenSoon();
  }

  // Pixels wide the page is shown with: its CSS width times the device's pixel ratio.
  wantedWidth() {
    const shown = this.scroller.clientWidth * this.zoom * (window.devicePixelRatio || 1);
    return Math.min(MAX_WIDTH, Math.max(WIDTH_STEP, Math.ceil(shown / WIDTH_STEP) * WIDTH_STEP));
  }

  sharpenSoon() {
    clearTimeout(this.sharpening);
    this.sharpening = setTimeout(() => {
      if (!this.state || this.root.hidden || this.state.textOnly || !this.shownWidth) return;
      const width = this.wantedWidth();
      if (width > this.shownWidth) this.loadImage(this.state.page, width);
    }, SHARPEN_MS);
  }

  // Over the page (narrow screens), the viewer is the only part in reach until it closes.
  coverPage() {
    const over = !this.root.hidden && getComputedStyle(this.root).position === "fixed";
    for (const other of document.querySelectorAll("body > .skip, body > header, .workspace > main")) {
      if (!other.contains(this.root)) other.inert = over;
    }
  }

  // docId, page, pageCount (optional), name (shown), evidence (text to highlight on `page`).
  async open({ docId, page, pageCount, name, evidence }) {
    if (this.root.hidden) this.opener = document.activeElement;
    const opening = ++this.openings; // a later open wins over one still reading its document
    // DOCX, HTML, Markdown and text documents have pages of text only: no image to show.
    let textOnly = false;
    let labels = [];
    try {
      const doc = await documentDetail(docId);
      pageCount = pageCount || doc.page_count;
      textOnly = (doc.format || "pdf") !== "pdf";
      labels = doc.card?.page_labels || [];
    } catch {
      pageCount = pageCount || null;
    }
    if (opening !== this.openings) return;
    this.state = { docId, page, pageCount, name: name || docId, evidence: evidence || "", evidencePage: page, textOnly, labels };
    this.root.hidden = false;
    this.zoom = 1;
    this.frame.style.width = "";
    this.zoomShown.textContent = "100 %";
    this.input.max = pageCount || "";
    this.coverPage();
    this.show();
    this.title.setAttribute("tabindex", "-1");
    this.title.focus({ preventScroll: true });
  }

  close() {
    this.root.hidden = true;
    this.coverPage();
    if (this.opener && this.opener.focus) this.opener.focus();
  }

  go(page) {
    // The page shown is not drawn again: the number field's change on leaving it would undo a selection.
    if (!this.state || !Number.isInteger(page) || page < 1 || page === this.state.page) return;
    if (this.state.pageCount && page > this.state.pageCount) return;
    this.state.page = page;
    this.show();
  }

  async show() {
    const { docId, page, pageCount, name, labels } = this.state;
    const id = encodeURIComponent(docId);
    this.title.textContent = `${name}, ${pagesLabel([page], labels)}`;
    this.input.value = page;
    this.count.textContent = pageCount ? `of ${pageCount}` : "";
    this.boxes.replaceChildren();
    this.layer.replaceChildren();
    this.note.textContent = "";
    this.text.textContent = "";
    this.scroller.hidden = this.state.textOnly;
    for (const control of this.root.querySelectorAll("[aria-label='Zoom'] button:not(#viewer-close)")) control.disabled = this.state.textOnly;
    const evidence = page === this.state.evidencePage ? this.state.evidence : "";
    if (this.state.textOnly) {
      this.textPanel.open = true;
      this.loadText(evidence);
      return;
    }
    this.image.alt = `Page ${page} of ${name}`;
    this.scroller.scrollTop = 0;
    this.shownWidth = 0;
    // No image of another page under this one's text and boxes while its own is rendered.
    this.image.removeAttribute("src");
    delete this.image.dataset.source;
    this.revealing = null; // the frame keeps the last page's shape until this one's is known: pages mostly share it
    // The text layer is asked for first: it is read in tens of milliseconds, while a dense page
    // can take a second to render, and the gateway reads one PDF page at a time.
    this.loadTextLayer(id, page);
    this.loadImage(page, this.wantedWidth());
    if (this.textPanel.open) this.loadText();
    if (!evidence) return;
    try {
      const found = await api(`/v1/documents/${id}/pages/${page}/boxes?text=${encodeURIComponent(evidence)}`);
      if (this.state.page !== page) return;
      const marks = found.boxes.map((box) => {
        const mark = document.createElement("div");
        mark.className = "box";
        mark.style.left = `${box.left * 100}%`;
        mark.style.top = `${box.top * 100}%`;
        mark.style.width = `${box.width * 100}%`;
        mark.style.height = `${box.height * 100}%`;
        return mark;
      });
      this.boxes.replaceChildren(...marks);
      if (marks.length) this.reveal(page, marks[0]);
      this.note.textContent = {
        exact: "The cited passage is highlighted.",
        closest: "The closest passage on this page is highlighted (the answer words it differently).",
        none: "The cited words were not found on this page.",
      }[found.match];
    } catch (error) {
      this.note.textContent = `Could not highlight the evidence: ${error.message}`;
    }
  }

  // The first box of the evidence scrolled into the middle of the viewer, once the page has its
  // height (the image shown, or the frame's height from the text layer).
  reveal(page, mark) {
    this.revealing = { page, mark };
    if (this.shownWidth || this.frame.style.aspectRatio) this.revealNow();
  }

  revealNow() {
    if (!this.revealing || this.revealing.page !== this.state.page) return;
    this.revealing.mark.scrollIntoView({ block: "center", inline: "nearest" });
    this.revealing = null;
  }

  // The image is fetched with the API key (an <img src> cannot send it) and shown from a blob.
  async loadImage(page, width) {
    const url = `/v1/documents/${encodeURIComponent(this.state.docId)}/pages/${page}/image?width=${width}`;
    const asked = ++this.imageAsked;
    let blob;
    try {
      const response = await fetch(url, { headers: authHeaders() });
      checkAuthorized(response.status);
      if (!response.ok) throw new Error(refusal(response.status));
      blob = await response.blob();
    } catch (error) {
      if (asked === this.imageAsked) this.note.textContent = `Could not load the page image: ${error.message}`;
      return;
    }
    if (this.state.page !== page || asked !== this.imageAsked) return;
    if (this.imageUrl) URL.revokeObjectURL(this.imageUrl);
    this.imageUrl = URL.createObjectURL(blob);
    this.shownWidth = width;
    this.image.dataset.source = url; // what is shown, for a reader of the page (src is the blob's)
    this.image.src = this.imageUrl;
    this.image.decode().then(() => this.revealNow(), () => {});
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
    const shape = `1 / ${layer.aspect}`; // the page's height before its image is in
    if (this.frame.style.aspectRatio !== shape) this.frame.style.aspectRatio = shape;
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
    this.revealNow();
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
