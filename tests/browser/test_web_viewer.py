"""The page viewer on a real 10-K from ../shared/data/pdfs/financebench (skipped with a reason
when the folder is absent), in Debian's Chromium, served by the gateway over fakes of its ports:
the filing indexed by the indexer, its tree beside the page, the printed page numbers, zoom at
the device's pixel ratio, keys, a copied line, a highlighted table row, the words of its page
recognised by OCR, and the phone.

Screenshots of the filing go to docs/ui/ for the README.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest

from services.gateway.answers import record_from_event
from services.gateway.web.rendering import text_layer
from services.indexer.pipeline import index_pdf
from shared.app.api_keys import issue_key
from shared.model.documents import IndexedDocument
from shared.model.events import AnswerVerified, QueryReceived
from shared.model.query import Citation
from shared.model.text_layer import TextLayer, TextLine
from shared.model.tree import TreeNode
from shared.settings import Settings
from tests.support.browser import DESKTOP, KEY_ITEM, PHONE, Tab, assert_accessible, launched
from tests.support.gateway.fake_gateway import FakeGateway, served, supported, verified

pytestmark = pytest.mark.shared_data

FILING = "BOEING_2022_10K.pdf"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "ui"
_AMOUNT = re.compile(r"\(?\$?\d{1,3}(?:,\d{3})*(?:\.\d+)?\)?%?")
TOUCH_PX = 44  # the smallest target a finger hits reliably (WCAG 2.5.5)


def table_row(layer: TextLayer) -> TextLine | None:
    """A row of a financial table: a label of a few words, then three or more amounts to the
    line's end."""
    for line in layer.lines:
        words = line.text.split()
        amounts = next((k for k, w in enumerate(reversed(words)) if not _AMOUNT.fullmatch(w)), len(words))
        label = words[:len(words) - amounts]
        if amounts >= 3 and 2 <= len(label) <= 8 and not any(_AMOUNT.fullmatch(w) for w in label):
            return line
    return None


def walk(nodes: list[TreeNode]) -> Iterator[TreeNode]:
    for node in nodes:
        yield node
        yield from walk(node.children)


@dataclass
class Filing:
    indexed: IndexedDocument
    data: bytes
    labels: list[str]
    table_page: int  # a page printing a table row, whose printed number differs from its place
    row: TextLine
    dense_page: int  # the page with the most lines of text

    @property
    def doc_id(self) -> str:
        return self.indexed.record.doc_id

    def range_name(self, start: int, end: int) -> str:
        if start == end:
            return self.page_name(start)
        first, last = self.labels[start - 1], self.labels[end - 1]
        if first and first != str(start) and last:
            return f"pp. {first}–{last} (PDF pages {start}–{end})"
        return f"pp. {start}–{end}"

    def page_name(self, page: int) -> str:
        """How the web app names a physical page: by its printed number, and its place beside it."""
        label = self.labels[page - 1]
        return f"p. {label} (PDF page {page})" if label and label != str(page) else f"p. {page}"


@pytest.fixture(scope="module")
def filing(shared_data: Path) -> Filing:
    data = (shared_data / "pdfs" / "financebench" / FILING).read_bytes()
    indexed = index_pdf(data, FILING)
    card = indexed.record.card
    assert card is not None and card.page_labels, "the filing's printed page numbers were not read"
    labels = card.page_labels
    # A table row on a page whose printed number is not its place in the file, from the middle on.
    middle = len(indexed.pages) // 2
    tables = ((n, table_row(text_layer(data, n))) for n in range(middle, len(indexed.pages) + 1)
              if labels[n - 1] and labels[n - 1] != str(n))
    table_page, row = next(((n, row) for n, row in tables if row is not None), (0, None))
    assert row is not None, "no table row found on a page with a printed number"
    with pdfium.PdfDocument(data) as pdf:
        chars = [pdf[i].get_textpage().count_chars() for i in range(len(pdf))]
    dense_page = chars.index(max(chars)) + 1
    return Filing(indexed, data, labels, table_page, row, dense_page)


@dataclass
class Site:
    url: str
    key: str
    fake: FakeGateway


@pytest.fixture(scope="module")
def site(filing: Filing) -> Iterator[Site]:
    settings = Settings(auth="on", kafka_bootstrap="127.0.0.1:1", mongo_url="mongodb://127.0.0.1:1/")
    fake = FakeGateway(settings=settings)
    record = filing.indexed.record.model_copy(update={"tenant": settings.tenant})
    fake.store.documents[record.doc_id] = record
    fake.store.pages[record.doc_id] = filing.indexed.pages
    fake.store.trees[record.doc_id] = filing.indexed.tree
    fake.store.pdfs[record.doc_id] = filing.data
    fake.store.text_layers[record.doc_id] = {layer.page: layer for layer in filing.indexed.text_layers}
    cited = Citation(doc_id=record.doc_id, file_name=FILING, pages=[filing.table_page])

    def answer(event: QueryReceived) -> AnswerVerified:
        # The stages' answer: the table row, cited on its page, as the verifier checks it.
        reply = verified(event, filing.row.text, supported([filing.row.text], cited), [cited], confidence=0.9)
        fake.queries.results[event.query_id] = record_from_event(reply)
        return reply

    fake.answer_with(answer)
    with ThreadPoolExecutor(1) as thread:  # Playwright's sync API runs an event loop in this one
        key = thread.submit(asyncio.run, issue_key(fake.keys, settings.tenant, admin=True)).result().key
    with served(fake.app()) as port:
        yield Site(url=f"http://127.0.0.1:{port}", key=key, fake=fake)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched() as browser:
        yield browser


def screenshot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def box(page: Any, selector: str) -> dict[str, float]:
    found = page.locator(selector).first.bounding_box()
    assert found is not None, f"{selector} is not shown"
    return dict(found)


def open_section_at(page: Any, filing: Filing, number: int, tap: bool = False) -> None:
    """Open the viewer at physical page `number` through the tree: its first section, then the
    page number typed in."""
    first = page.locator(".node-title").first
    first.tap() if tap else first.click()
    shows(page, filing, filing.indexed.tree.nodes[0].page_start)
    page.fill("#viewer-page", str(number))
    page.locator("#viewer-page").dispatch_event("change")
    shows(page, filing, number)


def shows(page: Any, filing: Filing, number: int) -> None:
    """Wait until the viewer shows page `number`: its title, text layer and image."""
    page.wait_for_function("(title) => document.getElementById('viewer-title').textContent === title",
                           arg=f"{FILING}, {filing.page_name(number)}")
    page.wait_for_function("() => document.querySelectorAll('#viewer-text-layer span').length > 0")
    page.wait_for_function("""(number) => {
      const image = document.getElementById('viewer-image');
      return (image.dataset.source || '').includes(`/pages/${number}/image`) && image.complete && image.naturalWidth > 0;
    }""", arg=number)


def test_the_tree_and_the_page_sit_side_by_side_and_pages_go_by_their_printed_numbers(
        browser: Any, site: Site, filing: Filing) -> None:
    tab = Tab(browser, DESKTOP, key=site.key)
    page = tab.page
    try:
        page.goto(f"{site.url}/documents/{filing.doc_id}")
        page.locator(".outline").wait_for()
        # The tree says its sections' pages as printed, with their place in the file beside.
        nodes = [n for n in walk(filing.indexed.tree.nodes) if n.level < 2]
        node = next(n for n in nodes if filing.labels[n.page_start - 1] not in ("", str(n.page_start)))
        titled = page.locator(".node-title", has=page.get_by_text(node.title, exact=True)).first
        shown_range = titled.locator(".range").inner_text()
        assert shown_range == filing.range_name(node.page_start, node.page_end)
        # Scrolled down the tree, a section opens beside it, in view, at its first page.
        page.mouse.wheel(0, 2_000)
        later = filing.indexed.tree.nodes[len(filing.indexed.tree.nodes) // 2]
        button = page.locator(".node-title", has=page.get_by_text(later.title, exact=True)).first
        button.scroll_into_view_if_needed()
        assert page.evaluate("window.scrollY") > 500
        button.click()
        shows(page, filing, later.page_start)
        tree, viewer = box(page, "#main"), box(page, "#viewer")
        assert viewer["x"] >= tree["x"] + tree["width"] - 1, (tree, viewer)
        assert 0 <= viewer["y"] <= 1 and viewer["height"] <= DESKTOP["height"] + 1, viewer
        frame = box(page, ".page-frame")
        assert frame["y"] < DESKTOP["height"] / 2 and frame["width"] > 0.5 * viewer["width"]
        # Turned to a page by its place in the file, the viewer names it by its printed number.
        open_section_at(page, filing, filing.table_page)
        title = page.locator("#viewer-title").inner_text()
        assert title == f"{FILING}, {filing.page_name(filing.table_page)}"
        assert "(PDF page" in title
        page.evaluate("window.scrollTo(0, 0)")  # the document's title above its tree, the page in view beside
        screenshot(page, "document-10k")
        tab.check("a 10-K's tree beside its page")
        page.set_viewport_size(PHONE)
        tab.check("a 10-K's page over its tree on a phone")
    finally:
        tab.close()


def test_the_page_is_rendered_at_the_device_pixel_ratio_and_zooms_with_its_text(
        browser: Any, site: Site, filing: Filing) -> None:
    context = browser.new_context(viewport=DESKTOP, device_scale_factor=2)
    context.add_init_script(f"sessionStorage.setItem('{KEY_ITEM}', '{site.key}')")
    page = context.new_page()
    try:
        page.goto(f"{site.url}/documents/{filing.doc_id}")
        page.locator(".outline").wait_for()
        open_section_at(page, filing, filing.dense_page)
        shown = page.evaluate("document.getElementById('viewer-scroll').clientWidth")
        image = page.locator("#viewer-image")
        natural = page.evaluate("document.getElementById('viewer-image').naturalWidth")
        assert 2 * shown <= natural < 2 * shown + 256, (shown, natural)  # as many pixels as the screen shows, rounded up
        assert f"width={natural}" in (image.get_attribute("data-source") or "")
        word = page.locator("#viewer-text-layer span").nth(40)
        before, frame_before = word.bounding_box(), box(page, ".page-frame")
        # Keys work wherever focus is in the viewer: on the page itself after a click on it.
        page.locator("#viewer-scroll").click(position={"x": 5, "y": 5})
        page.keyboard.press("+")
        assert page.locator("#viewer-zoom").inner_text() == "125 %"
        page.keyboard.press("+")
        assert page.locator("#viewer-zoom").inner_text() == "150 %"
        frame = box(page, ".page-frame")
        assert math.isclose(frame["width"], 1.5 * frame_before["width"], rel_tol=0.01)
        # The text layer follows the zoom with no layout of its own: the word is where it was on the page, 1.5x.
        after = word.bounding_box()
        assert math.isclose(after["width"], 1.5 * before["width"], rel_tol=0.02)
        assert math.isclose((after["x"] - frame["x"]) / frame["width"],
                            (before["x"] - frame_before["x"]) / frame_before["width"], abs_tol=0.002)
        # ... and the image is fetched again as sharp as it is now shown.
        page.wait_for_function(f"() => document.getElementById('viewer-image').naturalWidth >= {3 * shown}")
        page.wait_for_function("() => document.getElementById('viewer-image').complete")
        # The zoom buttons and keys from the buttons too; arrows turn pages from anywhere in the viewer.
        page.locator("#viewer-zoom-out").focus()
        page.keyboard.press("0")
        assert page.locator("#viewer-zoom").inner_text() == "100 %"
        page.keyboard.press("ArrowRight")
        page.locator("#viewer-title", has_text=filing.page_name(filing.dense_page + 1)).wait_for()
        page.locator("#viewer-evidence").click()  # a click on text that takes no focus of its own
        page.keyboard.press("ArrowLeft")
        page.locator("#viewer-title", has_text=filing.page_name(filing.dense_page)).wait_for()
        # Ctrl + wheel (a trackpad's pinch) zooms as well.
        page.locator("#viewer-scroll").hover()
        page.keyboard.down("Control")
        page.mouse.wheel(0, -200)
        page.keyboard.up("Control")
        page.wait_for_function("() => parseInt(document.getElementById('viewer-zoom').textContent) > 100")
        page.keyboard.press("Escape")
        assert page.locator("#viewer").is_hidden()
        assert page.evaluate("document.activeElement.classList.contains('node-title')")  # back where it was opened
    finally:
        context.close()


def test_a_page_recognised_by_ocr_shows_the_words_read_on_it_where_they_are(
        browser: Any, site: Site, filing: Filing) -> None:
    assert filing.indexed.text_layers, "the filing has no page without a text layer of its own"
    recognised = filing.indexed.text_layers[0]
    tab = Tab(browser, DESKTOP, key=site.key)
    page = tab.page
    try:
        page.goto(f"{site.url}/documents/{filing.doc_id}")
        page.locator(".outline").wait_for()
        open_section_at(page, filing, recognised.page)
        spans = page.locator("#viewer-text-layer span")
        assert [text.strip() for text in spans.all_inner_texts()] == [w.text for line in recognised.lines for w in line.words]
        frame, word = box(page, ".page-frame"), box(page, "#viewer-text-layer span")
        first = recognised.lines[0].words[0].box
        assert abs((word["x"] - frame["x"]) / frame["width"] - first.left) < 0.005
        assert abs((word["y"] - frame["y"]) / frame["height"] - first.top) < 0.01
    finally:
        tab.close()


# Drags the mouse over the text-layer line at `index`, from the left of its first word to the
# right of its last, as a reader selecting it does.
LINE_ENDS = """(index) => {
  const spans = [...document.querySelectorAll('#viewer-text-layer span')];
  const starts = [0];
  let k = 0;
  for (const node of document.getElementById('viewer-text-layer').children) {
    if (node.tagName === 'BR') starts.push(k); else k += 1;
  }
  const line = spans.slice(starts[index], starts[index + 1]);
  const first = line[0].getBoundingClientRect(), last = line[line.length - 1].getBoundingClientRect();
  return {x0: first.left + 1, y0: first.top + first.height / 2, x1: last.right - 1, y1: last.top + last.height / 2};
}"""


def test_a_line_copied_through_the_browsers_selection_is_the_page_texts_line(
        browser: Any, site: Site, filing: Filing) -> None:
    tab = Tab(browser, DESKTOP, key=site.key)
    tab.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = tab.page
    try:
        page.goto(f"{site.url}/documents/{filing.doc_id}")
        page.locator(".outline").wait_for()
        open_section_at(page, filing, filing.dense_page)
        layer = text_layer(filing.data, filing.dense_page)
        stored = [" ".join(line.split()) for line in filing.indexed.pages[filing.dense_page - 1].splitlines()]
        # Lines from the top, the middle and the bottom of the densest page, each a text line of the page.
        for index in (2, len(layer.lines) // 2, len(layer.lines) - 3):
            line = layer.lines[index]
            ends = page.evaluate(LINE_ENDS, index)
            page.locator("#viewer-scroll").evaluate(f"(area) => area.scrollTo(0, {ends['y0']} - 200 + area.scrollTop)")
            ends = page.evaluate(LINE_ENDS, index)
            page.mouse.move(ends["x0"], ends["y0"])
            page.mouse.down()
            page.mouse.move(ends["x1"], ends["y1"], steps=8)
            page.mouse.up()
            page.keyboard.press("Control+c")
            copied = page.evaluate("navigator.clipboard.readText()")
            assert copied.strip() == line.text, (index, copied, line.text)
            if not line.text.endswith("-"):  # the stored text joins a word broken at a line end
                assert line.text in stored, (index, line.text)
        tab.check("a 10-K page with a line selected")
    finally:
        tab.close()


def test_a_citation_of_a_table_row_highlights_that_row_one_box_for_its_line(
        browser: Any, site: Site, filing: Filing) -> None:
    tab = Tab(browser, DESKTOP, key=site.key)
    page = tab.page
    try:
        page.goto(f"{site.url}/ask")
        page.fill("#question", "What does the table say?")
        page.locator("#ask-button").click()
        citation = page.locator("#answer-text .citation").first
        # Cited by its printed number, with its place in the file beside it.
        page.locator("#answer-text .citation", has_text=filing.page_name(filing.table_page)).wait_for()
        assert citation.inner_text() == f"[{FILING}, {filing.page_name(filing.table_page)}]"
        citation.click()
        page.locator("#viewer-boxes .box").first.wait_for()
        shows(page, filing, filing.table_page)
        assert page.locator("#viewer-title").inner_text() == f"{FILING}, {filing.page_name(filing.table_page)}"
        assert page.locator("#viewer-boxes .box").count() == 1  # the row is one printed line
        frame, mark = box(page, ".page-frame"), box(page, "#viewer-boxes .box")
        row = filing.row.box
        assert abs((mark["y"] - frame["y"]) / frame["height"] - row.top) < 0.005
        assert abs((mark["x"] - frame["x"]) / frame["width"] - row.left) < 0.01
        assert abs(mark["width"] / frame["width"] - row.width) < 0.02
        viewer = box(page, "#viewer-scroll")
        assert viewer["y"] <= mark["y"] and mark["y"] + mark["height"] <= viewer["y"] + viewer["height"]  # in view
        screenshot(page, "highlight-10k")
        tab.check("a 10-K's table row highlighted")
    finally:
        tab.close()


SMALL_TARGETS = """(least) => [...document.querySelectorAll(
    'button, select, summary, a.button, label.button, header a, .documents td:first-child a,'
    + ' input:not([type=checkbox]):not([type=radio]):not([type=file]), label:has(> input[type=checkbox])')]
  .filter((e) => e.offsetParent !== null && !e.closest('[hidden], .visually-hidden'))
  .map((e) => [e.id || e.textContent.trim().slice(0, 30), e.getBoundingClientRect()])
  .filter(([, r]) => r.width > 0 && (r.width < least || r.height < least))
  .map(([name, r]) => `${name}: ${Math.round(r.width)}x${Math.round(r.height)}`)"""


def pinch(page: Any, centre: tuple[float, float], start: float, end: float) -> None:
    """Two fingers from `start` px apart to `end` px apart about `centre`, as a touch screen sends them."""
    cdp = page.context.new_cdp_session(page)
    x, y = centre

    def fingers(spread: float) -> list[dict[str, float]]:
        return [{"x": x - spread / 2, "y": y, "id": 0}, {"x": x + spread / 2, "y": y, "id": 1}]

    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": fingers(start)})
    for step in range(1, 11):
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": fingers(start + (end - start) * step / 10)})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    cdp.detach()


def test_on_a_phone_documents_are_cards_the_viewer_pinches_and_every_target_fits_a_finger(
        browser: Any, site: Site, filing: Filing) -> None:
    context = browser.new_context(viewport=PHONE, device_scale_factor=3, is_mobile=True, has_touch=True)
    context.add_init_script(f"sessionStorage.setItem('{KEY_ITEM}', '{site.key}')")
    page = context.new_page()
    try:
        page.goto(f"{site.url}/")
        card = page.locator("#documents tbody tr", has_text=FILING)
        card.wait_for()
        delete = card.get_by_role("button", name=f"Delete {FILING}", exact=True)
        delete.wait_for()
        # A compact header; the key form behind its button.
        assert box(page, "header.top")["height"] <= 110
        assert page.locator("#api-key").is_hidden()
        page.locator("#key-toggle").click()
        assert page.locator("#api-key").is_visible() and page.locator("#key-toggle").get_attribute("aria-expanded") == "true"
        page.locator("#key-toggle").click()
        # The document is a card, its facts and its Delete within the screen, nothing scrolled sideways.
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        shown = box(page, f"#documents tbody tr[data-doc-id='{filing.doc_id}']")
        action = delete.bounding_box()
        assert action is not None and action["x"] + action["width"] <= shown["x"] + shown["width"] <= PHONE["width"]
        # Each fact on a line of its own, named (the table's column headings are not shown).
        named = card.evaluate("""(row) => [...row.cells].filter((c) => c.dataset.label).map((c) =>
          [c.dataset.label, getComputedStyle(c, '::before').content !== 'none', Math.round(c.getBoundingClientRect().left)])""")
        assert [name for name, _, _ in named] == ["Status", "Pages", "Builder", "Warnings"]
        assert all(shown_name for _, shown_name, _ in named) and len({left for _, _, left in named}) == 1, named
        assert page.evaluate(SMALL_TARGETS, TOUCH_PX) == []
        screenshot(page, "documents-phone")
        assert_accessible(page, "documents as cards on a phone")

        page.goto(f"{site.url}/documents/{filing.doc_id}")
        page.locator(".outline").wait_for()
        assert page.evaluate(SMALL_TARGETS, TOUCH_PX) == []
        open_section_at(page, filing, filing.table_page, tap=True)
        # Over the page, the page fitting the screen's width; the tree under it out of reach.
        viewer, frame = box(page, "#viewer"), box(page, ".page-frame")
        assert viewer["x"] == 0 and viewer["y"] == 0 and viewer["width"] == PHONE["width"]
        assert frame["width"] <= PHONE["width"] and page.evaluate("document.getElementById('main').inert")
        assert page.evaluate(SMALL_TARGETS, TOUCH_PX) == []
        # Two fingers apart zoom in, about the point between them; the button zooms too.
        area = box(page, "#viewer-scroll")
        pinch(page, (area["x"] + area["width"] / 2, area["y"] + area["height"] / 2), 100, 250)
        zoom = int(page.locator("#viewer-zoom").inner_text().split()[0])
        assert 230 <= zoom <= 270, zoom
        assert math.isclose(box(page, ".page-frame")["width"], frame["width"] * zoom / 100, rel_tol=0.02)
        page.locator("#viewer-zoom-in").tap()
        assert page.locator("#viewer-zoom").inner_text() == "300 %"
        pinch(page, (area["x"] + area["width"] / 2, area["y"] + area["height"] / 2), 300, 100)
        assert page.locator("#viewer-zoom").inner_text() == "100 %"
        screenshot(page, "viewer-phone")
        assert_accessible(page, "a 10-K page on a phone")
        page.locator("#viewer-close").tap()
        assert not page.evaluate("document.getElementById('main').inert")
    finally:
        context.close()
