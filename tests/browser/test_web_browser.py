"""The web app in Debian's Chromium, served by the gateway on fakes of its ports (no Kafka, no
MongoDB): what a user sees on a first visit without a key, asking over filings chosen by their
cards, deleting a document, the section tree and the pipeline page; every page checked with
axe-core at 1280 px and at a 390-px phone width.

The documents are filings with cards (issuer, form, period) as the indexer reads them; the
stages are replaced by answers chosen by the question's words (`answer`), and a question
nobody answers runs into the gateway's timeout.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from typing import Any

import pytest

from services.gateway.answers import record_from_event
from shared.app.api_keys import issue_key
from shared.model.card import DocType, DocumentCard, DocumentPeriod
from shared.model.documents import DocumentRecord, DocumentStatus, DocumentTree
from shared.model.events import AnswerVerified, QueryOutcome, QueryProgress, QueryReceived
from shared.model.query import Citation, VerifiedAnswer
from shared.model.tree import TreeNode
from shared.settings import Settings
from tests.support.browser import DESKTOP, KEY_ITEM, PHONE, SERIOUS, Tab, assert_accessible, launched
from tests.support.gateway.fake_gateway import FakeGateway, served, supported

APPLE = "AAPL_2023_10K.pdf"
NIKE = "NKE_2024Q1_10Q.pdf"
DRAFT = "draft-notes.md"
APPLE_CARD = "Apple Inc. · 10-K · FY2023, ended 2023-09-30"
NIKE_CARD = "NIKE, Inc. · 10-Q · FY2024 Q1, ended 2023-08-31"
REVENUE = "Total net sales were $383,285 million in fiscal 2023."
ANSWER_WAIT_S = 2.0  # the gateway's query timeout: a question nobody answers ends after this


def answer(event: QueryReceived) -> AnswerVerified | None:
    """The stages' answer: revenue is answered from Apple's page 2, a zebra is not in any
    filing (an abstention), a ratio is stated by no page (the closest passage is shown), and
    "slow" is never answered (the gateway times out)."""
    if "slow" in event.question:
        return None
    if "zebra" in event.question:
        verified = VerifiedAnswer(question=event.question, answer="", abstained=True)
        outcome = QueryOutcome(answer=verified, mode="dfs")
    else:
        cited = Citation(doc_id="apple-10k", file_name=APPLE, pages=[2])
        verified = VerifiedAnswer(question=event.question, answer=REVENUE, citations=[cited],
                                  sentences=supported([REVENUE], cited), confidence=0.91, assessment="likely right",
                                  stated="ratio" not in event.question)
        outcome = QueryOutcome(answer=verified, mode=event.settings.mode if event.settings.mode != "auto" else "dfs",
                               tokens_before=900, tokens_after=300)
    return AnswerVerified(query_id=event.query_id, question=event.question, doc_ids=event.doc_ids,
                          settings=event.settings, tenant=event.tenant, outcome=outcome)


def filing(doc_id: str, file_name: str, card: DocumentCard | None, status: DocumentStatus = DocumentStatus.READY,
           tenant: str = "default") -> DocumentRecord:
    return DocumentRecord(doc_id=doc_id, file_name=file_name, page_count=3, status=status, card=card, tenant=tenant,
                          reason="the PDF has no pages" if status == DocumentStatus.FAILED else None)


def apple_tree() -> DocumentTree:
    risk = TreeNode(id="0002", title="Item 1A. Risk Factors", page_start=2, page_end=2, level=2, verified=True)
    business = TreeNode(id="0001", title="Part I", page_start=1, page_end=2, level=1, verified=True, children=[risk])
    results = TreeNode(id="0003", title="Item 8. Financial Statements", page_start=3, page_end=3, level=1)
    return DocumentTree(doc_id="apple-10k", nodes=[business, results])


@dataclass
class Site:
    url: str
    key: str
    fake: FakeGateway


def site_of(records: list[DocumentRecord]) -> Iterator[Site]:
    """A gateway on fakes holding `records`, asking for API keys, served on a loopback port."""
    settings = Settings(auth="on", query_timeout_s=ANSWER_WAIT_S, kafka_bootstrap="127.0.0.1:1",
                        mongo_url="mongodb://127.0.0.1:1/")
    fake = FakeGateway(settings=settings)
    for record in records:
        fake.store.documents[record.doc_id] = record
        fake.store.pages[record.doc_id] = ["Cover", REVENUE, "Statements"]
    fake.store.trees["apple-10k"] = apple_tree()

    def answered_and_stored(event: QueryReceived) -> AnswerVerified | None:
        reply = answer(event)
        if reply is not None:  # as the stages' results reach the query store
            fake.queries.results[event.query_id] = record_from_event(reply)
        return reply

    fake.answer_with(answered_and_stored)
    # In a thread of its own: Playwright's sync API runs an event loop in this one.
    with ThreadPoolExecutor(1) as thread:
        key = thread.submit(asyncio.run, issue_key(fake.keys, settings.tenant, admin=True)).result().key
    with served(fake.app()) as port:
        yield Site(url=f"http://127.0.0.1:{port}", key=key, fake=fake)


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    apple = DocumentCard(issuer="Apple Inc.", doc_type=DocType.FORM_10K,
                         period=DocumentPeriod(fiscal_year=2023, period_end=date(2023, 9, 30), years=[2023]))
    nike = DocumentCard(issuer="NIKE, Inc.", doc_type=DocType.FORM_10Q,
                        period=DocumentPeriod(fiscal_year=2024, fiscal_quarter=1, period_end=date(2023, 8, 31)))
    yield from site_of([filing("nike-10q", NIKE, nike), filing("apple-10k", APPLE, apple),
                        filing("draft", DRAFT, DocumentCard()), filing("broken", "broken.pdf", None, DocumentStatus.FAILED)])


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched() as browser:
        yield browser


@pytest.fixture
def tab(browser: Any, site: Site) -> Iterator[Tab]:
    """A desktop tab with the key entered."""
    tab = Tab(browser, DESKTOP, key=site.key)
    yield tab
    tab.close()


def listings(page: Any) -> list[str]:
    """The document listings the page asks for, as they are sent."""
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url) if "/v1/documents?" in request.url else None)
    return seen


def document_reads(page: Any, doc_id: str) -> list[str]:
    """The reads of one document's record the page sends."""
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url) if request.url.endswith(f"/v1/documents/{doc_id}") else None)
    return seen


def test_a_first_visit_says_where_a_key_comes_from_and_the_key_can_be_remembered(browser: Any, site: Site) -> None:
    tab = Tab(browser, DESKTOP)
    try:
        asked = listings(tab.page)
        tab.page.goto(f"{site.url}/")
        help_box = tab.page.locator("#key-help")
        help_box.wait_for()
        assert "make up" in help_box.inner_text() and "treerag keys create --tenant NAME" in help_box.inner_text()
        assert "Remember on this device" in help_box.inner_text()
        tab.page.locator("#list-status", has_text="needs an API key").wait_for()
        assert tab.page.locator("#key-state").inner_text() == "Enter your API key."
        body = tab.page.locator("body").inner_text()
        assert "401" not in body and "not found" not in body.lower()
        # `hidden` hides: nothing to forget, nothing more to show.
        assert tab.page.locator("#key-forget").is_hidden() and tab.page.locator("#show-more").is_hidden()
        # Buttons look like buttons, on the blue header too: a fill of their own and a pointer.
        style = tab.page.evaluate("""() => {
          const s = (e) => getComputedStyle(e);
          const b = document.getElementById('key-save'), top = document.querySelector('header.top');
          return {fill: s(b).backgroundColor, header: s(top).backgroundColor, border: s(b).borderStyle, cursor: s(b).cursor};
        }""")
        assert style["fill"] != style["header"] and style["border"] == "solid" and style["cursor"] == "pointer", style
        tab.check("documents, no key")
        tab.page.wait_for_timeout(4_500)
        assert len(asked) == 1, asked  # refused: the list is not polled

        # A document's page without a key asks for the key; it does not say the document is missing.
        tab.page.goto(f"{site.url}/documents/apple-10k")
        tab.page.locator("#doc-title", has_text="Enter your API key").wait_for()
        assert "Document not found" not in tab.page.locator("main").inner_text()
        tab.check("document, no key")

        # Remembered on this device: a document opened in another tab opens with the key.
        tab.page.fill("#api-key", site.key)
        tab.page.check("#key-remember")
        tab.page.click("#key-save")
        tab.page.locator("#doc-title", has_text=APPLE).wait_for()
        assert tab.page.locator("#key-state").inner_text() == "Key remembered on this device."
        assert tab.page.locator("#key-help").is_hidden() and tab.page.locator("#key-forget").is_visible()
        assert tab.page.evaluate(f"localStorage.getItem('{KEY_ITEM}')") == site.key
        other = tab.open()
        other.goto(f"{site.url}/documents/apple-10k")
        other.locator("#doc-title", has_text=APPLE).wait_for()
        other.locator("#key-forget").click()  # forgotten here, forgotten for every tab
        other.locator("#key-help").wait_for()
        assert tab.page.evaluate(f"localStorage.getItem('{KEY_ITEM}')") is None
    finally:
        tab.close()


def test_a_key_not_remembered_lasts_for_its_tab_only(browser: Any, site: Site) -> None:
    tab = Tab(browser, DESKTOP)
    try:
        tab.page.goto(f"{site.url}/")
        tab.page.fill("#api-key", site.key)
        tab.page.click("#key-save")
        tab.page.locator("#documents tbody tr", has_text=APPLE).wait_for()
        assert tab.page.locator("#key-state").inner_text() == "Key set for this tab."
        other = tab.open()
        other.goto(f"{site.url}/documents/apple-10k")
        other.locator("#doc-title", has_text="Enter your API key").wait_for()
        # A wrong key is refused in words, with the same help.
        other.fill("#api-key", site.key[:-4] + "AAAA")
        other.click("#key-save")
        other.locator("#key-help-refused").wait_for()
        assert other.locator("#key-state").inner_text() == "Key refused: enter a valid one."
    finally:
        tab.close()


def test_the_list_shows_each_filings_card(tab: Tab, site: Site) -> None:
    tab.page.goto(f"{site.url}/")
    row = tab.page.locator("#documents tbody tr", has_text=APPLE)
    row.wait_for()
    assert row.locator(".card-line").inner_text() == APPLE_CARD
    assert tab.page.locator("#documents tbody tr", has_text=DRAFT).locator(".card-line").count() == 0  # a card with nothing read
    for viewport, name in ((DESKTOP, "documents"), (PHONE, "documents on a phone")):
        tab.page.set_viewport_size(viewport)
        tab.check(name)


def test_asking_chooses_filings_by_their_cards_and_says_the_answer_in_words(tab: Tab, site: Site) -> None:
    page = tab.page
    page.goto(f"{site.url}/ask")
    apple = page.get_by_role("checkbox", name=re.compile(r"^AAPL_2023_10K\.pdf"))
    apple.wait_for()
    every = page.get_by_role("checkbox", name="All documents")
    assert every.is_checked()
    assert page.locator("#scope-list li", has_text=APPLE).inner_text() == f"{APPLE} — {APPLE_CARD}"
    assert page.locator("#scope-list li", has_text=NIKE).inner_text() == f"{NIKE} — {NIKE_CARD}"
    assert page.locator("#scope-list li", has_text="broken.pdf").count() == 0  # only ready documents
    # Ticking a filing unticks "All documents"; unticking the last ticks it again.
    apple.check()
    assert not every.is_checked() and page.locator("#scope-note").inner_text() == "Asking 1 document."
    apple.uncheck()
    assert every.is_checked()
    # The search mode waits under "Advanced".
    assert page.locator("#mode").is_hidden()
    page.locator(".advanced summary").click()
    page.select_option("#mode", "beam")
    apple.check()
    page.fill("#question", "What was Apple's revenue in fiscal 2023?")
    page.locator("#ask-button").click()
    page.locator("#answer-verdict", has_text="Likely right").wait_for()
    assert page.locator("#answer-verdict").inner_text() == "Likely right (91 % chance)."
    assert REVENUE in page.locator("#answer-text").inner_text()
    page.wait_for_function("() => document.activeElement && document.activeElement.id === 'answer'")
    asked = site.fake.bus.of_type(QueryReceived)[-1]
    assert asked.doc_ids == ["apple-10k"] and asked.settings.mode == "beam"
    tab.check("ask, answered")

    # While the next question is computed, the answer before it is in the thread, marked earlier.
    page.fill("#question", "A slow question about Apple")
    page.locator("#ask-button").click()
    page.locator("#answer-verdict", has_text="Searching the documents").wait_for()
    assert REVENUE not in page.locator("#answer").inner_text()
    earlier = page.locator("#thread .turn.past")
    assert earlier.count() == 1 and earlier.locator(".turn-label").inner_text() == "EARLIER ANSWER"
    assert REVENUE in earlier.inner_text() and "You asked: What was Apple's revenue in fiscal 2023?" in earlier.inner_text()
    # ... and when it fails, the panel says so, with nothing of the earlier answer in it.
    page.locator("#answer-verdict", has_text="No answer yet").wait_for(timeout=ANSWER_WAIT_S * 1000 + 10_000)
    assert REVENUE not in page.locator("#answer").inner_text()
    assert page.locator("#answer-text").inner_text() == ""
    page.wait_for_function("() => document.activeElement && document.activeElement.id === 'answer'")

    # An abstention in words; "How it was found" prints no missing value.
    page.fill("#question", "Which zebra audits Apple?")
    page.locator("#ask-button").click()
    page.locator("#answer-verdict", has_text="No answer: nothing in the documents supports one").wait_for()
    page.locator("#answer-details summary").click()
    found = page.locator("#answer-path").inner_text()
    assert found.startswith("Search: dfs."), found
    for missing in ("null", "undefined", "?", "NaN"):
        assert missing not in found, found
    tab.check("ask, abstained")


def test_an_answer_a_model_is_writing_shows_as_unchecked_until_its_sentences_are_checked(
        tab: Tab, site: Site) -> None:
    cited = Citation(doc_id="apple-10k", file_name=APPLE, pages=[2])
    first = f"{REVENUE[:-1]} [{APPLE}, p. 2]. "

    def writing(event: QueryReceived) -> list[QueryProgress]:
        if not event.progress:
            return []
        return [QueryProgress.of(event, "draft", index=0, text=first + "iPhone"),
                QueryProgress.of(event, "sentence", index=0, sentence=supported([REVENUE], cited)[0]),
                QueryProgress.of(event, "draft", index=len(first) + 6, text=" sales were")]

    site.fake.bus.progress, site.fake.bus.answer_after_s = writing, 1.5
    try:
        page = tab.page
        page.goto(f"{site.url}/ask")
        page.fill("#question", "What was Apple's revenue in fiscal 2023?")
        page.locator("#ask-button").click()
        draft = page.locator("#answer-draft")
        # The events come one after another: the draft as it reads after the last of them.
        page.locator("#answer-draft", has_text="sales were").wait_for()
        # The checked sentence stands above; the draft holds only what follows it, marked unchecked.
        assert draft.inner_text() == "iPhone sales were"
        assert page.locator("#answer-text .sentence").inner_text().startswith(REVENUE)
        assert page.evaluate("getComputedStyle(document.getElementById('answer-draft'), '::before').content") \
            == '"Being written, not checked yet: "'
        tab.check("ask, an answer being written")
        page.locator("#answer-verdict", has_text="Likely right").wait_for()
        assert draft.is_hidden()
        assert page.locator("#answer-text .sentence").count() == 1
    finally:
        site.fake.bus.progress, site.fake.bus.answer_after_s = (lambda _: []), 0.0


def test_an_answer_no_page_states_is_shown_as_the_closest_passages(tab: Tab, site: Site) -> None:
    page = tab.page
    page.goto(f"{site.url}/ask")
    page.fill("#question", "What was Apple's current ratio in fiscal 2023?")
    page.locator("#ask-button").click()
    page.locator("#answer-verdict", has_text="No passage states").wait_for()
    assert page.locator("#answer-verdict").inner_text() == "No passage states the figure asked for. The closest passages:"
    assert REVENUE in page.locator("#answer-text").inner_text()  # shown, under that name, not as the answer
    tab.check("ask, the figure stated by no page")


def test_the_ask_page_fits_a_phone(browser: Any, site: Site) -> None:
    tab = Tab(browser, PHONE, key=site.key)
    try:
        tab.page.goto(f"{site.url}/ask")
        tab.page.get_by_role("checkbox", name=re.compile(r"^NKE_2024Q1_10Q\.pdf")).check()
        tab.page.fill("#question", "What was the revenue?")
        tab.page.locator("#ask-button").click()
        tab.page.locator("#answer-text .citation").wait_for()
        assert tab.page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        tab.check("ask on a phone")
    finally:
        tab.close()


def test_delete_asks_with_a_cancel_disarms_by_itself_and_its_outcome_stays(tab: Tab, site: Site) -> None:
    page = tab.page
    page.goto(f"{site.url}/")
    row = page.locator("#documents tbody tr", has_text=DRAFT)
    delete = row.get_by_role("button", name=f"Delete {DRAFT}", exact=True)
    delete.click()
    question = row.locator(".confirm-question")
    assert question.inner_text() == f"Delete {DRAFT}?"
    assert row.get_by_role("button", name=f"Delete {DRAFT} for good").inner_text() == "Delete"
    cancel = row.get_by_role("button", name=f"Cancel deleting {DRAFT}")
    assert cancel.inner_text() == "Cancel"
    assert page.evaluate("document.activeElement.textContent") == "Cancel"  # the safe answer has the focus
    for viewport, name in ((DESKTOP, "documents, a delete armed"), (PHONE, "documents on a phone, a delete armed")):
        page.set_viewport_size(viewport)
        tab.check(name)
    page.set_viewport_size(DESKTOP)
    cancel.click()
    delete.wait_for()
    assert question.count() == 0
    # Unanswered, it disarms by itself after a few seconds.
    delete.click()
    started = time.monotonic()
    question.wait_for()
    delete.wait_for(timeout=15_000)
    assert question.count() == 0 and 5 < time.monotonic() - started < 14
    # Confirmed, the document goes, and the outcome stays until the next action.
    delete.click()
    row.get_by_role("button", name=f"Delete {DRAFT} for good").click()
    row.wait_for(state="detached")
    notice = page.locator("#list-notice")
    assert notice.inner_text() == f"Deleted {DRAFT}."
    page.wait_for_timeout(3_000)
    assert notice.inner_text() == f"Deleted {DRAFT}."
    assert page.locator("#documents tbody tr", has_text=APPLE).count() == 1


def test_the_list_polls_only_while_a_document_is_indexed_and_the_tab_is_visible(browser: Any) -> None:
    for fake_site in site_of([filing("pending", "pending.pdf", None, DocumentStatus.INDEXING)]):
        tab = Tab(browser, DESKTOP, key=fake_site.key)
        try:
            asked = listings(tab.page)
            tab.page.goto(f"{fake_site.url}/")
            tab.page.locator("#list-status", has_text="1 being indexed").wait_for()
            tab.page.wait_for_timeout(4_500)
            assert len(asked) >= 2, asked  # polled while it is indexed
            # Hidden: no more polling; visible again: at once, then while it is indexed.
            tab.page.evaluate("""() => { Object.defineProperty(document, 'visibilityState', {value: 'hidden', configurable: true});
                                        document.dispatchEvent(new Event('visibilitychange')); }""")
            tab.page.wait_for_timeout(2_500)
            hidden_at = len(asked)
            tab.page.wait_for_timeout(4_500)
            assert len(asked) == hidden_at, asked
            record = fake_site.fake.store.documents["pending"]
            fake_site.fake.store.documents["pending"] = record.model_copy(update={"status": DocumentStatus.READY})
            tab.page.evaluate("""() => { Object.defineProperty(document, 'visibilityState', {value: 'visible', configurable: true});
                                        document.dispatchEvent(new Event('visibilitychange')); }""")
            tab.page.locator("#documents tbody .status-ready").wait_for()
            ready_at = len(asked)
            tab.page.wait_for_timeout(4_500)
            assert len(asked) == ready_at, asked  # nothing indexed: nothing polled
        finally:
            tab.close()


def test_a_document_page_asks_again_only_while_it_is_indexed_and_the_tab_is_visible(browser: Any) -> None:
    for fake_site in site_of([filing("pending", "pending.pdf", None, DocumentStatus.INDEXING)]):
        tab = Tab(browser, DESKTOP, key=fake_site.key)
        try:
            asked = document_reads(tab.page, "pending")
            tab.page.goto(f"{fake_site.url}/documents/pending")
            tab.page.locator("#tree-status", has_text="Indexing").wait_for()
            tab.page.wait_for_timeout(4_500)
            assert len(asked) >= 2, asked  # asked again while it is indexed
            tab.page.evaluate("""() => { Object.defineProperty(document, 'visibilityState', {value: 'hidden', configurable: true});
                                        document.dispatchEvent(new Event('visibilitychange')); }""")
            tab.page.wait_for_timeout(2_500)
            hidden_at = len(asked)
            tab.page.wait_for_timeout(4_500)
            assert len(asked) == hidden_at, asked  # a hidden tab asks nothing
            record = fake_site.fake.store.documents["pending"]
            fake_site.fake.store.documents["pending"] = record.model_copy(update={"status": DocumentStatus.READY})
            tab.page.evaluate("""() => { Object.defineProperty(document, 'visibilityState', {value: 'visible', configurable: true});
                                        document.dispatchEvent(new Event('visibilitychange')); }""")
            # Shown again: asked at once, and the page leaves "Indexing…" for the tree.
            tab.page.wait_for_function("() => !document.getElementById('tree-status').textContent.startsWith('Indexing')")
            ready_at = len(asked)
            tab.page.wait_for_timeout(4_500)
            assert len(asked) == ready_at, asked  # ready: nothing more to ask
        finally:
            tab.close()


def test_the_section_tree_and_the_pipeline_page_are_accessible_at_both_widths(tab: Tab, site: Site) -> None:
    page = tab.page
    page.goto(f"{site.url}/documents/apple-10k")
    page.locator(".outline").wait_for()
    assert page.locator("summary button, summary a").count() == 0  # nothing interactive inside a summary
    toggle = page.get_by_role("button", name="Hide the 1 sections of Part I")
    assert toggle.get_attribute("aria-expanded") == "true"
    toggle.click()
    assert page.locator(".node-title", has_text="Item 1A. Risk Factors").is_hidden()
    page.get_by_role("button", name="Show the 1 sections of Part I").click()
    assert page.locator(".node-title", has_text="Item 1A. Risk Factors").is_visible()
    facts = page.locator("#doc-facts").inner_text()
    assert "Apple Inc." in facts and "FY2023, ended 2023-09-30" in facts
    for viewport, name in ((DESKTOP, "document"), (PHONE, "document on a phone")):
        page.set_viewport_size(viewport)
        tab.check(name)
    # The page a provider sends a signed-in user back to, opened as a bookmark would be.
    page.goto(f"{site.url}/signin")
    page.wait_for_load_state("networkidle")
    for viewport, name in ((DESKTOP, "sign-in return"), (PHONE, "sign-in return on a phone")):
        page.set_viewport_size(viewport)
        tab.check(name)
    page.set_viewport_size(DESKTOP)
    page.goto(f"{site.url}/pipeline")
    page.locator("#stages-status", has_text="Prometheus").wait_for()
    page.locator("#pipeline-status", has_text="Updated").wait_for()
    for viewport, name in ((DESKTOP, "pipeline"), (PHONE, "pipeline on a phone")):
        page.set_viewport_size(viewport)
        tab.check(name)


def test_the_api_pages_have_no_serious_accessibility_violation_at_both_widths(browser: Any, site: Site) -> None:
    # The vendor pages' heading levels (a moderate finding) are theirs; contrast, labels and
    # controls inside controls are what keep a reader out, and are held here.
    tab = Tab(browser, DESKTOP)
    try:
        for path, drawn in (("/docs", ".opblock-summary-method"), ("/redoc", "h5")):
            tab.page.set_viewport_size(DESKTOP)
            tab.page.goto(f"{site.url}{path}")
            tab.page.locator(drawn).first.wait_for()
            if path == "/redoc":  # the pickers are named once the reference is drawn
                tab.page.wait_for_function("() => [...document.querySelectorAll('#redoc select')]"
                                           ".every((s) => s.getAttribute('aria-label'))")
            for viewport, width in ((DESKTOP, "desktop"), (PHONE, "phone")):
                tab.page.set_viewport_size(viewport)
                assert_accessible(tab.page, f"{path} ({width})", SERIOUS)
    finally:
        tab.close()
