"""The web app on the real stack: a PDF uploaded in the browser is indexed, its tree opens its
pages, and a question's citation opens the cited page with a highlight box over the cited
sentence. The PDF's title, headings, text and file name carry markup that must never run.

The browser is Debian's Chromium (`make test` installs it) driven by Playwright's Python package
(tests/support/browser.py); every page is checked with axe-core, at 1280x800 and at a 390-px phone width,
and a screenshot of each is saved to docs/ui/ for the README.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest
from fpdf import FPDF
from PIL import Image, ImageStat

from services.gateway.web.rendering import text_layer
from tests.support.browser import DESKTOP, PHONE, assert_accessible, launched
from tests.support.integration.pdfs import FILLER, TOPICS, corrupt_pdf
from tests.support.integration.prometheus import Prometheus, wait_for_scrapes
from tests.support.integration.stack import Gateway, ServiceProcess, Stack, wait_until

pytestmark = pytest.mark.integration

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "ui"
UNIT = 913
HOSTILE = "<script>window.__pwned = 'text'</script><img src=x onerror=\"window.__pwned = 'img'\">"
FILE_NAME = "<img src=x onerror=window.__pwned=1> unit-913.pdf"
QUESTION = f"After how many days are the intake filters of unit {UNIT} replaced?"
CITED_FACT = f"The intake filters of unit {UNIT} are replaced after {30 + UNIT} days of service"
# The page's image is in (an image with no source yet counts as complete).
IMAGE_SHOWN = "() => { const image = document.getElementById('viewer-image'); return image.complete && image.naturalWidth > 0; }"


def hostile_manual_pdf() -> bytes:
    """The integration manual's chapters, with markup in the title, each heading and each page."""
    values = {"n": UNIT, "h": 500 + 10 * UNIT, "g": f"L{UNIT}", "p": 10 + UNIT, "r": f"C{UNIT}",
              "f": 30 + UNIT, "w": 2 + UNIT % 5}
    pdf = FPDF()
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.set_title(f"{HOSTILE} Operations manual")
    for number, (title, fact) in enumerate(TOPICS):
        pdf.add_page()
        heading = f"{number + 1} {title} <b onmouseover=\"window.__pwned='tree'\">"
        pdf.start_section(heading, level=0)
        pdf.set_font("Helvetica", "B", 16)
        pdf.cell(0, 12, heading, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", 11)
        pdf.multi_cell(0, 6, f"{FILLER} {fact.format(**values)} {HOSTILE}")
    return bytes(pdf.output())


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched() as browser:
        yield browser


class Page:
    """A browser tab that records what must never happen: script errors, dialogs, CSP reports."""

    key: str | None = None  # the session's API key (`api_key`): each tab starts with it entered

    def __init__(self, browser: Any, viewport: dict[str, int], *, with_key: bool = True) -> None:
        self.context = browser.new_context(viewport=viewport)
        if with_key and Page.key:
            # As if entered in the key field of an earlier page of this tab (`uploaded` enters it).
            self.context.add_init_script(f"sessionStorage.setItem('treerag.api-key', {json.dumps(Page.key)})")
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.page.on("pageerror", lambda error: self.problems.append(f"script error: {error}"))
        self.page.on("dialog", lambda dialog: (self.problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
        self.page.on("console", lambda message: message.type == "error" and not message.text.startswith(
            "Failed to load resource") and self.problems.append(f"console: {message.text}"))

    def check(self, name: str) -> None:
        assert self.page.evaluate("window.__pwned") is None, "markup from the PDF ran"
        assert self.problems == [], self.problems
        assert_accessible(self.page, name)

    def close(self) -> None:
        self.context.close()


def screenshot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def sentence_position(pdf: bytes, page_number: int, text: str) -> tuple[float, float]:
    """(left, top) of `text` on the page as fractions, from pdfium's own search."""
    document = pdfium.PdfDocument(pdf)
    page = document[page_number - 1]
    textpage = page.get_textpage()
    searcher = textpage.search(text, match_case=False)
    found = searcher.get_next()
    assert found, f"{text!r} is not on page {page_number}"
    left, _, _, top = textpage.get_charbox(found[0])
    width, height = page.get_size()
    return left / width, 1 - top / height


@pytest.fixture(scope="module", autouse=True)
def tabs_carry_the_key(api_key: str) -> Iterator[None]:
    Page.key = api_key
    yield
    Page.key = None


@pytest.fixture(scope="module")
def uploaded(gateway: Gateway, browser: Any, indexer_for_module: ServiceProcess) -> Iterator[dict[str, Any]]:
    data = hostile_manual_pdf()
    tab = Page(browser, DESKTOP, with_key=False)
    try:
        tab.page.goto(f"{gateway.url}/")
        # Without a key the page says where to enter it and where keys come from; entered, it is used from then on.
        tab.page.locator("#key-help", has_text="make up").wait_for(timeout=30_000)
        assert tab.page.locator("#key-state").inner_text() == "Enter your API key."
        assert "401" not in tab.page.locator("body").inner_text()
        tab.page.fill("#api-key", gateway.key or "")
        tab.page.click("#key-save")
        tab.page.locator("#key-state", has_text="Key set").wait_for(timeout=30_000)
        assert tab.page.evaluate("sessionStorage.getItem('treerag.api-key')") == gateway.key
        # Two files at once: each gets its own progress bar and its own status.
        tab.page.set_input_files("#file-input", files=[
            {"name": FILE_NAME, "mimeType": "application/pdf", "buffer": data},
            {"name": "broken-913.pdf", "mimeType": "application/pdf", "buffer": corrupt_pdf() + b"913"},
        ])
        row = tab.page.locator("#documents tbody tr", has_text="unit-913.pdf")
        row.locator(".status-ready").wait_for(timeout=120_000)
        broken = tab.page.locator("#documents tbody tr", has_text="broken-913.pdf")
        broken.locator(".status-failed .reason").wait_for(timeout=120_000)
        assert broken.locator(".reason").inner_text().strip()  # the indexer's reason, in words
        progress = tab.page.locator("#uploads li")
        assert progress.count() == 2
        assert [progress.nth(i).locator("progress").get_attribute("value") for i in range(2)] == ["100", "100"]
        assert progress.nth(0).locator(".status-ready").inner_text() == "ready: 5 pages"
        assert "refused" not in tab.page.locator("#uploads").inner_text()  # both uploads were accepted
        screenshot(tab.page, "documents")
        tab.check("documents")
        yield {"data": data, "doc_id": row.get_attribute("data-doc-id")}
    finally:
        tab.close()


def test_the_list_shows_one_status_on_request(gateway: Gateway, browser: Any, uploaded: dict[str, Any]) -> None:
    tab = Page(browser, DESKTOP)
    try:
        tab.page.goto(f"{gateway.url}/")
        tab.page.locator("#documents tbody tr", has_text=FILE_NAME).wait_for()
        tab.page.select_option("#status-filter", "failed")
        tab.page.locator("#documents tbody tr", has_text=FILE_NAME).wait_for(state="detached")
        rows = tab.page.locator("#documents tbody tr")
        assert rows.filter(has_text="broken-913.pdf").count() == 1
        assert all("Failed" in rows.nth(i).locator("td.status").inner_text() for i in range(rows.count()))
        assert "failed document" in tab.page.locator("#list-status").inner_text()
        tab.check("documents filtered by status")
    finally:
        tab.close()


def test_delete_is_offered_exactly_when_the_api_has_it(gateway: Gateway, browser: Any, uploaded: dict[str, Any]) -> None:
    spec = gateway.get("/openapi.json", timeout=10).json()
    api_deletes = "delete" in spec["paths"]["/v1/documents/{doc_id}"]
    tab = Page(browser, DESKTOP)
    try:
        tab.page.goto(f"{gateway.url}/")
        broken = tab.page.locator("#documents tbody tr", has_text="broken-913.pdf")
        broken.wait_for()
        button = broken.get_by_role("button", name="Delete broken-913.pdf", exact=True)
        if not api_deletes:
            tab.page.wait_for_timeout(500)  # the page has read the API description
            assert button.count() == 0
            return
        doc_id = broken.get_attribute("data-doc-id")
        button.click()
        # The first press asks, with a way back: Cancel keeps the document.
        broken.get_by_role("button", name="Cancel deleting broken-913.pdf").click()
        button.wait_for()
        assert gateway.get(f"/v1/documents/{doc_id}", timeout=10).status_code == 200
        button.click()
        broken.get_by_role("button", name="Delete broken-913.pdf for good").click()  # the second press confirms
        broken.wait_for(state="detached", timeout=30_000)
        assert gateway.get(f"/v1/documents/{doc_id}", timeout=10).status_code == 404
        notice = tab.page.locator("#list-notice")
        assert notice.inner_text() == "Deleted broken-913.pdf."
        tab.page.wait_for_timeout(2_500)  # the list redraws while documents are indexed: the notice stays
        assert notice.inner_text() == "Deleted broken-913.pdf."
        tab.check("documents after a delete")
    finally:
        tab.close()


def test_the_list_polls_only_while_a_document_is_being_indexed(gateway: Gateway, browser: Any,
                                                               uploaded: dict[str, Any]) -> None:
    tab = Page(browser, DESKTOP)
    try:
        listings: list[str] = []
        tab.page.on("request", lambda request: listings.append(request.url) if "/v1/documents?" in request.url else None)
        tab.page.goto(f"{gateway.url}/")
        tab.page.locator("#documents tbody tr").first.wait_for()
        busy = gateway.get("/v1/documents", params={"status": "indexing"}, timeout=10).json()
        tab.page.wait_for_timeout(5_000)
        if not busy:  # nothing being indexed: the first listing is the only one
            assert len(listings) == 1, listings
        assert tab.page.locator("#show-more").is_hidden()  # every document fits on the page
    finally:
        tab.close()


def test_the_uploaded_pdf_is_listed_ready_with_its_pages(gateway: Gateway, uploaded: dict[str, Any]) -> None:
    document = gateway.get(f"/v1/documents/{uploaded['doc_id']}", timeout=10).json()
    assert document["status"] == "ready"
    assert document["page_count"] == len(TOPICS)
    assert document["file_name"] == FILE_NAME
    # The card read at indexing travels through the indexer, MongoDB and the gateway.
    assert document["card"] is not None and document["card"]["title"] == document["title"]


def test_a_section_of_the_tree_opens_its_first_page(gateway: Gateway, browser: Any, uploaded: dict[str, Any]) -> None:
    tab = Page(browser, DESKTOP)
    try:
        tab.page.goto(f"{gateway.url}/")
        tab.page.locator("#documents a", has_text="unit-913.pdf").click()
        tab.page.locator(".outline").wait_for()
        assert tab.page.locator("#doc-title").inner_text() == FILE_NAME
        section = tab.page.locator(".node-title", has_text="4 Filter replacement")
        assert "<b onmouseover" in section.inner_text()  # shown as text, not markup
        section.click()
        image = tab.page.locator("#viewer-image")
        tab.page.wait_for_function("() => document.getElementById('viewer-image').naturalWidth > 0")
        # Fetched with the key (an <img src> could not send it) and shown from a blob.
        # As many pixels wide as the viewer shows it (device pixel ratio 1), rounded up to 256.
        shown = tab.page.evaluate("document.getElementById('viewer-scroll').clientWidth")
        assert image.get_attribute("data-source").endswith(f"/pages/4/image?width={-(-shown // 256) * 256}")
        assert image.get_attribute("src").startswith("blob:")
        assert tab.page.locator("#viewer-title").inner_text().endswith("p. 4")
        tab.page.locator("#viewer-next").click()
        tab.page.wait_for_function("() => (document.getElementById('viewer-image').dataset.source || '').includes('/pages/5/')")
        tab.page.fill("#viewer-page", "2")
        tab.page.locator("#viewer-page").dispatch_event("change")
        tab.page.wait_for_function("() => (document.getElementById('viewer-image').dataset.source || '').includes('/pages/2/')")
        tab.page.wait_for_function(IMAGE_SHOWN)
        screenshot(tab.page, "document")
        tab.check("document")
    finally:
        tab.close()


# Selects, as a reader dragging over it would, the text-layer line holding the word that starts
# with `word`: from the first word after the previous line break to the last before the next.
# Returns the selection's text and where the line is on screen.
SELECT_LINE = """(word) => {
  const spans = [...document.querySelectorAll('#viewer-text-layer span')];
  const at = spans.find((s) => s.textContent.startsWith(word));
  let first = at, last = at;
  while (first.previousElementSibling && first.previousElementSibling.tagName === 'SPAN') first = first.previousElementSibling;
  while (last.nextElementSibling && last.nextElementSibling.tagName === 'SPAN') last = last.nextElementSibling;
  const range = document.createRange();
  range.setStart(first.firstChild, 0);
  range.setEnd(last.firstChild, last.firstChild.length);
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  const box = at.getBoundingClientRect(), end = last.getBoundingClientRect();
  return {text: selection.toString(), top: box.top, right: end.right};
}"""


def ask_and_open_the_citation(tab: Page, gateway: Gateway, doc_id: str) -> None:
    tab.page.goto(f"{gateway.url}/ask")
    tab.page.locator(f"#scope-list input[value='{doc_id}']").check()
    tab.page.fill("#question", QUESTION)
    tab.page.locator("#ask-button").click()
    citation = tab.page.locator("#answer-text .citation").first
    citation.wait_for(timeout=60_000)
    # A streamed sentence's citation shows before the answer is whole; the next question can
    # be asked once it is (the button stands disabled until then).
    tab.page.locator("#ask-button:enabled").wait_for(timeout=60_000)
    # Keyboard: the citation is a button reached by focus and pressed with Enter.
    citation.focus()
    tab.page.keyboard.press("Enter")
    tab.page.locator("#viewer-boxes .box").first.wait_for(timeout=30_000)
    tab.page.wait_for_function(IMAGE_SHOWN)


def test_a_citation_opens_its_page_with_the_cited_sentence_highlighted(
        gateway: Gateway, browser: Any, uploaded: dict[str, Any]) -> None:
    tab = Page(browser, DESKTOP)
    try:
        ask_and_open_the_citation(tab, gateway, uploaded["doc_id"])
        answer = tab.page.locator("#answer-text").inner_text()
        assert f"{30 + UNIT} days" in answer
        assert "[<img src=x onerror=window.__pwned=1> unit-913.pdf, p. 4]" in answer
        assert tab.page.locator("#viewer-title").inner_text().endswith("p. 4")
        # The first box starts where pdfium prints the cited sentence on the rendered page.
        frame = tab.page.locator("#viewer-image").bounding_box()
        box = tab.page.locator("#viewer-boxes .box").first.bounding_box()
        left, top = sentence_position(uploaded["data"], 4, CITED_FACT)
        assert abs((box["x"] - frame["x"]) / frame["width"] - left) < 0.03
        assert abs((box["y"] - frame["y"]) / frame["height"] - top) < 0.02
        # ... and the screenshot shows the highlight there: yellow-tinted pixels inside the box.
        shot = Image.open(io.BytesIO(tab.page.locator("#viewer-boxes .box").first.screenshot())).convert("RGB")
        red, green, blue = ImageStat.Stat(shot).mean
        assert blue < red - 40 and blue < green - 40, (red, green, blue)
        # The page's text lies over the image where it is printed, a word at a time, and a line
        # selected in the browser copies as the line's text.
        printed = next(line for line in text_layer(uploaded["data"], 4).lines if f"{30 + UNIT} days" in line.text)
        copied = tab.page.evaluate(SELECT_LINE, f"{30 + UNIT} ")
        assert copied["text"] == printed.text
        box = tab.page.locator("#viewer-boxes .box").first.bounding_box()  # measured after the scroll
        assert abs(copied["top"] - box["y"]) < 0.02 * frame["height"]
        # The box starts mid-line (after the previous sentence) and ends with the line, as its last word does.
        assert abs(copied["right"] - box["x"] - box["width"]) < 0.02 * frame["width"]
        tab.page.locator("#answer-details summary").click()
        assert tab.page.locator("#answer-timings tbody tr").count() >= 3  # navigator, compressor, verifier, total
        # The navigation path: the sections visited in order, the cited one among those selected,
        # its heading's markup shown as text.
        kept = tab.page.locator("#answer-path-list li.selected", has_text="4 Filter replacement")
        assert kept.count() == 1
        assert "<b onmouseover" in kept.inner_text() and kept.inner_text().endswith("selected")
        screenshot(tab.page, "ask")
        tab.check("ask")
    finally:
        tab.close()


def test_the_ask_page_is_a_conversation_with_its_own_link(gateway: Gateway, browser: Any,
                                                          uploaded: dict[str, Any]) -> None:
    tab = Page(browser, DESKTOP)
    try:
        ask_and_open_the_citation(tab, gateway, uploaded["doc_id"])
        tab.page.keyboard.press("Escape")
        assert "chat=" in tab.page.url
        tab.page.fill("#question", "And the coolant pump?")
        tab.page.locator("#ask-button").click()
        # While the follow-up is answered, the first answer is in the thread, not the answer panel.
        tab.page.locator("#thread .turn.past").first.wait_for(timeout=30_000)
        assert f"{30 + UNIT} days" in tab.page.locator("#thread").inner_text()
        tab.page.locator("#answer-question", has_text="Asked as:").wait_for(timeout=60_000)
        assert "coolant pump" in tab.page.locator("#answer-question").inner_text()
        tab.page.locator("#answer-text .citation").first.wait_for(timeout=60_000)
        tab.page.locator("#ask-button:enabled").wait_for(timeout=60_000)  # the turn is whole, and stored
        link = tab.page.url
        tab.page.goto(link)  # the link opens the conversation again, every turn in order
        tab.page.locator("#thread .turn.past").first.wait_for(timeout=30_000)
        tab.page.locator("#answer-question", has_text="coolant pump").wait_for(timeout=30_000)
        tab.check("ask, a conversation")
    finally:
        tab.close()


def test_a_question_nothing_supports_is_answered_with_an_abstention_in_words(
        gateway: Gateway, browser: Any, uploaded: dict[str, Any]) -> None:
    tab = Page(browser, DESKTOP)
    try:
        tab.page.goto(f"{gateway.url}/ask")
        tab.page.locator(f"#scope-list input[value='{uploaded['doc_id']}']").check()
        tab.page.fill("#question", "Which zebra plays the saxophone in the quantum orchestra?")
        tab.page.locator("#ask-button").click()
        verdict = tab.page.locator("#answer-verdict")
        verdict.filter(has_text="No answer").wait_for(timeout=60_000)
        assert tab.page.locator("#answer-text .citation").count() == 0
        tab.page.locator("#answer-details summary").click()
        found = tab.page.locator("#answer-path").inner_text()
        assert "null" not in found and "undefined" not in found and "?" not in found, found
        tab.check("ask, abstained")
    finally:
        tab.close()


def test_the_ask_page_fits_a_phone(gateway: Gateway, browser: Any, uploaded: dict[str, Any]) -> None:
    tab = Page(browser, PHONE)
    try:
        ask_and_open_the_citation(tab, gateway, uploaded["doc_id"])
        assert tab.page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        screenshot(tab.page, "ask-phone")
        tab.check("ask on a phone")
    finally:
        tab.close()


def test_a_markdown_file_picked_in_the_browser_is_cited_with_its_page_text_marked(
        gateway: Gateway, browser: Any, uploaded: dict[str, Any]) -> None:
    """A format without page images: the viewer shows the cited page's text, the evidence marked."""
    from tests.support.formats import guide_markdown

    tab = Page(browser, DESKTOP)
    try:
        tab.page.goto(f"{gateway.url}/")
        tab.page.set_input_files("#file-input", files=[
            # Bytes of its own: the same guide uploaded by another test would be a duplicate here.
            {"name": "guide-913.md", "mimeType": "text/markdown", "buffer": guide_markdown() + b"\nEdition 913.\n"},
        ])
        row = tab.page.locator("#documents tbody tr", has_text="guide-913.md")
        row.locator(".status-ready").wait_for(timeout=120_000)
        doc_id = row.get_attribute("data-doc-id")
        tab.page.goto(f"{gateway.url}/ask")
        tab.page.locator(f"#scope-list input[value='{doc_id}']").check()
        tab.page.fill("#question", "What does error code 41 mean?")
        tab.page.locator("#ask-button").click()
        citation = tab.page.locator("#answer-text .citation").first
        citation.wait_for(timeout=60_000)
        citation.click()
        mark = tab.page.locator("#viewer-text mark")
        mark.wait_for(timeout=30_000)
        assert "licence key has expired" in mark.inner_text()
        assert tab.page.locator(".page-frame").is_hidden()  # no image for a page of text
        assert "3.2 Error codes" in tab.page.locator("#viewer-text").inner_text()
        screenshot(tab.page, "ask-markdown")
        tab.check("ask, a Markdown document")
    finally:
        tab.close()


@pytest.fixture(scope="module")
def prometheus_gateway(stack: Stack, uploaded: dict[str, Any], tmp_path_factory: pytest.TempPathFactory,
                       api_key: str) -> Iterator[tuple[Gateway, Prometheus]]:
    """A Prometheus scraping every process of the stack, and a gateway that reads it."""
    targets: dict[str, list[str]] = {}
    for process in stack.processes:
        if process.alive and process.metrics_port:
            targets.setdefault(process.name.rsplit("-", 1)[0], []).append(f"127.0.0.1:{process.metrics_port}")
    server = Prometheus.start(tmp_path_factory.mktemp("web-prometheus"), targets)
    gateway = stack.start_gateway(api_key, TREERAG_PROMETHEUS_URL=server.url)
    try:
        wait_until(gateway.ready, 240, "the gateway with Prometheus /readyz", interval_s=0.5)
        wait_for_scrapes(server, sorted(targets))
        for _ in range(3):  # traffic in the rate window
            response = gateway.post("/v1/query", timeout=60,
                                  json={"question": QUESTION, "doc_ids": [uploaded["doc_id"]]})
            assert response.status_code == 200, response.text
        wait_for_scrapes(server, sorted(targets))
        yield gateway, server
    finally:
        stack.stop(gateway.process)
        server.stop()


def test_the_pipeline_page_shows_each_stage_from_prometheus(
        browser: Any, prometheus_gateway: tuple[Gateway, Prometheus]) -> None:
    gateway, _ = prometheus_gateway
    figures = gateway.get("/v1/pipeline", timeout=10).json()
    assert figures["source"] == "prometheus", figures
    stages = {s["stage"] for s in figures["stages"]}
    assert {"indexer", "navigator", "compressor", "verifier"} <= stages
    navigator = next(s for s in figures["stages"] if s["stage"] == "navigator")
    assert navigator["messages_per_s"] > 0 and navigator["handler_p95_s"] > 0
    tab = Page(browser, DESKTOP)
    try:
        tab.page.goto(f"{gateway.url}/pipeline")
        tab.page.locator("#stages tbody th", has_text="navigator").wait_for()
        tab.page.locator("#pipeline tbody tr").first.wait_for()
        assert "document.uploaded" in tab.page.locator("#pipeline tbody").inner_text()
        screenshot(tab.page, "pipeline")
        tab.check("pipeline")
        tab.page.set_viewport_size(PHONE)  # the tables scroll sideways, from the keyboard too
        tab.check("pipeline on a phone")
    finally:
        tab.close()


def test_without_prometheus_the_pipeline_page_says_so(gateway: Gateway, browser: Any) -> None:
    tab = Page(browser, DESKTOP)
    try:
        tab.page.goto(f"{gateway.url}/pipeline")
        tab.page.locator("#stages-status", has_text="TREERAG_PROMETHEUS_URL").wait_for()
        tab.page.locator("#pipeline tbody tr").first.wait_for()
        tab.check("pipeline without Prometheus")
    finally:
        tab.close()


def test_api_docs_render_offline(gateway: Gateway, browser: Any) -> None:
    tab = Page(browser, DESKTOP)
    try:
        # Any request to another origin fails: the docs must not need one.
        tab.context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(gateway.url)
                          else route.abort())
        tab.page.goto(f"{gateway.url}/docs")
        tab.page.locator(".opblock-summary-path[data-path='/v1/documents/{doc_id}/pages/{number}/image']").wait_for()
        tab.page.goto(f"{gateway.url}/redoc")
        tab.page.locator("h2", has_text="Where a text is on the page, as boxes to highlight").wait_for()
        # ReDoc's footer asks for its vendor's logo from another origin: the policy refuses it.
        assert [p for p in tab.problems if "violates the following Content Security Policy directive: \"img-src" not in p] == []
    finally:
        tab.close()
