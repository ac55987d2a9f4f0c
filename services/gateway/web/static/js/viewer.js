// The page viewer: the page image rendered by the gateway, evidence boxes over it, page text,
// previous / next and jump to page.
import { api } from "./common.js";

const SCALE = 1.5;

export class PageViewer {
  constructor(root) {
    this.root = root;
    this.image = root.querySelector("#viewer-image");
    this.boxes = root.querySelector("#viewer-boxes");
    this.title = root.querySelector("#viewer-title");
    this.input = root.querySelector("#viewer-page");
    this.count = root.querySelector("#viewer-count");
    this.note = root.querySelector("#viewer-evidence");
    this.text = root.querySelector("#viewer-text");
    this.textPanel = root.querySelector("#viewer-text-panel");
    this.state = null;
    root.querySelector("#viewer-prev").addEventListener("click", () => this.go(this.state.page - 1));
    root.querySelector("#viewer-next").addEventListener("click", () => this.go(this.state.page + 1));
    root.querySelector("#viewer-close").addEventListener("click", () => this.close());
    this.input.addEventListener("change", () => this.go(Number(this.input.value)));
    this.textPanel.addEventListener("toggle", () => this.textPanel.open && this.loadText());
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
    if (!pageCount) {
      try {
        pageCount = (await api(`/v1/documents/${encodeURIComponent(docId)}`)).page_count;
      } catch {
        pageCount = null;
      }
    }
    this.state = { docId, page, pageCount, name: name || docId, evidence: evidence || "", evidencePage: page };
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
    this.note.textContent = "";
    this.image.alt = `Page ${page} of ${name}`;
    this.image.src = `/v1/documents/${id}/pages/${page}/image?scale=${SCALE}`;
    this.text.textContent = "";
    if (this.textPanel.open) this.loadText();
    const evidence = page === this.state.evidencePage ? this.state.evidence : "";
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

  async loadText() {
    const { docId, page } = this.state;
    try {
      const body = await api(`/v1/documents/${encodeURIComponent(docId)}/pages/${page}`);
      if (this.state.page === page) this.text.textContent = body.text;
    } catch (error) {
      this.text.textContent = `No text: ${error.message}`;
    }
  }
}

export function pageViewer() {
  const root = document.getElementById("viewer");
  return root ? new PageViewer(root) : null;
}
