"""Verified answers: extractive offline, or a generator's text, both checked the same way.

Offline the answer is the few context sentences that best cover the question, each followed by
its page citation. A generator's answer goes through the same citation parsing and the same check against the
cited page (`detector.py`); citations to pages that are not in the context are removed and
reported, and sentences the cited page contradicts are dropped (or kept and flagged, by
setting).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from services.verifier.detector import (
    ABSTENTION,
    SourcePage,
    check_sentence,
    overall,
)
from services.verifier.figures import figure_lead, figure_stated
from services.verifier.fragments import (
    Seam,
    is_heading_only,
    is_symbolic,
    page_seams,
    shorten,
    split_at_seams,
)
from services.verifier.written import WrittenSentences
from shared.adapters.logs import log_fields
from shared.model.card import DocumentCard
from shared.model.query import (
    Citation,
    CompressedContext,
    Passage,
    QuerySettings,
    SentenceCheck,
    SourceNote,
    VerifiedAnswer,
)
from shared.ports.model_calls import made_from
from shared.ports.model_roles import AnswerGenerator, EntailmentJudge
from shared.text.citations import (
    format_citation,
    parse_citations,
    strip_citations,
)
from shared.text.lexical import query_terms, sentences_of, terms
from shared.text.normalize import DOT_LEADER, fold, normalize
from shared.text.question import asked_scale, asks_for_statement, literal_share, literals
from shared.text.seams import line_breaks
from shared.text.substitution import WordVectors

logger = logging.getLogger(__name__)

# Abstain when the best context sentence covers less than this share of the question's
# (IDF-weighted) content terms: nothing in the context is about the question.
MIN_COVERAGE = 0.05

# Sentences scoring below this share of the best one are not worth adding to the answer.
RELATIVE_KEEP = 0.6
MIN_SENTENCE_TERMS = 3
# Sentence relevance = coverage + TITLE_WEIGHT·(question terms only in its section title)
# + PHRASE_WEIGHT·(question bigrams matched) + PRIOR_WEIGHT·(passage rank score).
PHRASE_WEIGHT = 0.2
PRIOR_WEIGHT = 0.3
TITLE_WEIGHT = 0.25
# Bonus for quoting the question's literals (options, dotted names) verbatim.
LITERAL_WEIGHT = 0.2
MAX_SENTENCE_TERMS = 120
# The whole extractive answer stops growing past this many words (the best sentence always stays).
MAX_ANSWER_WORDS = 120
# Question words that ask for a table row, a command or code rather than prose.
_ASKS_FOR_SYMBOLS = frozenset({"command", "commands", "code", "syntax", "table", "snippet", "example", "call"})
_FIRST_WORD = re.compile(r"\W*(\w+)")
_LAST_WORD = re.compile(r"(\w+)\W*$")

PageText = Callable[[str, int], "str | None"]
# Told each sentence once it is checked: its place in the answer, its check, and the sentence as
# the answer's text shows it (its citation marker included; "" when the answer leaves it out).
SentenceListener = Callable[[int, SentenceCheck, str], None]
# Told the answer so far while a generator writes it.
DraftListener = Callable[[str], None]


@dataclass
class _Candidate:
    text: str
    passage: Passage
    terms: set[str]
    bigrams: set[tuple[str, str]]
    order: int
    relevance: float = 0.0
    coverage: float = 0.0


def _bigrams(seq: list[str]) -> set[tuple[str, str]]:
    return set(zip(seq, seq[1:], strict=False))


def _wants_symbols(question: str) -> bool:
    return bool(literals(question)) or any(w.strip("?.,").lower() in _ASKS_FOR_SYMBOLS for w in question.split())


def _candidates(passages: list[Passage], sources: _Sources) -> list[_Candidate]:
    out: list[_Candidate] = []
    for passage in passages:
        for piece in passage.text.split("…"):
            piece = _whole_words(piece, sources.folded(passage.doc_id, passage.pages))
            for sentence, seq in _statements(piece, passage, sources):
                if DOT_LEADER.search(sentence):  # table-of-contents lines
                    continue
                if not MIN_SENTENCE_TERMS <= len(seq) <= MAX_SENTENCE_TERMS:
                    continue
                out.append(_Candidate(sentence, passage, set(seq), _bigrams(seq), len(out)))
    return out


def _whole_words(piece: str, pages: list[str]) -> str:
    """`piece` without the part-word at either end that a passage cut from its page inside a
    word (a chunk's edge) starts or ends with: a word none of its pages holds whole."""
    if not pages:
        return piece
    head = _FIRST_WORD.match(piece)
    if head and not any(_holds_whole(page, fold(head.group(1))) for page in pages):
        piece = piece[head.end(1):]
    tail = _LAST_WORD.search(piece)
    if tail and not any(_holds_whole(page, fold(tail.group(1))) for page in pages):
        piece = piece[: tail.start(1)]
    return piece


def _holds_whole(page: str, word: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", page) is not None


def _statements(text: str, passage: Passage, sources: _Sources) -> Iterator[tuple[str, list[str]]]:
    """The text's sentences with their terms; one too long to be a sentence (a table, a list, a
    page without punctuation) is cut where its page's lines break, so its rows can still answer."""
    for sentence in sentences_of(text):
        seq = terms(sentence)
        if len(seq) <= MAX_SENTENCE_TERMS:
            yield sentence, seq
        else:
            for row in split_at_seams(sentence, sources.line_breaks(passage.doc_id, passage.pages)):
                yield row, terms(row)


def _readable(c: _Candidate, sources: _Sources, weights: dict[str, float], keep_symbols: bool,
              whole: bool = False) -> str:
    """What the answer shows of a chosen sentence: the fragment (split off headings, running
    headers, bullets and table rows by the page's layout) holding most of the question, cut
    to its best clauses when long, unless the answer is to be the `whole` sentence."""
    fragments = split_at_seams(c.text, sources.seams(c.passage.doc_id, c.passage.pages))
    statements = [f for f in fragments if not is_heading_only(f) and (keep_symbols or not is_symbolic(f))]
    # The best sentence is kept even when it is all table or heading (the cited page depends
    # on it); then its single best row is shown.
    statements = statements or fragments or [c.text]

    def weight(fragment: str) -> float:
        return math.fsum(weights.get(t, 0.0) for t in set(terms(fragment)))  # order-free: see shorten()

    best = max(statements, key=lambda f: (weight(f), -statements.index(f)))
    return best if whole else shorten(best, weights, terms)


def _rank(question: str, candidates: list[_Candidate], passages: list[Passage]) -> None:
    qterms = query_terms(question)
    if not qterms or not candidates:
        return
    n = len(candidates)
    # IDF over the context's sentences; a question term absent from the context weighs most.
    idf = {t: math.log((n + 1) / (sum(t in c.terms for c in candidates) + 0.5)) for t in qterms}
    total = sum(idf.values()) or 1.0
    qbigrams = _bigrams(qterms)
    best_passage = max((p.score for p in passages), default=0.0) or 1.0
    titles: dict[str, set[str]] = {}
    wanted = literals(question)
    for c in candidates:
        c.coverage = sum(idf[t] for t in qterms if t in c.terms) / total
        phrase = len(qbigrams & c.bigrams) / len(qbigrams) if qbigrams else 0.0
        prior = max(c.passage.score, 0.0) / best_passage
        # The section a sentence sits in is part of what it says: question terms found only
        # in the section title count at TITLE_WEIGHT.
        title_terms = titles.setdefault(c.passage.title, set(terms(c.passage.title)))
        in_title = sum(idf[t] for t in qterms if t in title_terms and t not in c.terms) / total
        c.relevance = c.coverage + TITLE_WEIGHT * in_title + PHRASE_WEIGHT * phrase + PRIOR_WEIGHT * prior
        # A question naming an option or dotted name ("-e", ".First") is answered where it is quoted.
        if wanted:
            c.relevance += LITERAL_WEIGHT * literal_share(c.text, wanted)


def _label_map(passages: list[Passage]) -> dict[str, str]:
    """Every way a citation may name a context document -> its doc id."""
    labels: dict[str, str] = {}
    for p in passages:
        for key in (p.doc_id, p.file_name, p.file_name.rsplit(".", 1)[0] if p.file_name else ""):
            if key:
                labels[normalize(key)] = p.doc_id
    return labels


def _resolve_doc(name: str, labels: dict[str, str]) -> str | None:
    key = normalize(name)
    if key in labels:
        return labels[key]
    prefixed = {doc for label, doc in labels.items() if len(key) >= 6 and label.startswith(key)}
    return prefixed.pop() if len(prefixed) == 1 else None


class _Sources:
    """The text a citation points at: full page text when available, else the context."""

    def __init__(self, passages: list[Passage], page_text: PageText | None,
                 judge: EntailmentJudge | None = None, word_vectors: WordVectors | None = None) -> None:
        self.page_text = page_text
        self.judge = judge
        self.word_vectors = word_vectors
        self.context: dict[tuple[str, int], list[str]] = {}
        for p in passages:
            for page in p.pages:
                self.context.setdefault((p.doc_id, page), []).append(p.text)
        self._cache: dict[tuple[str, tuple[int, ...]], list[SourcePage]] = {}
        self._seams: dict[tuple[str, str, int], frozenset[Seam]] = {}  # (rule, doc, page)
        self._forms: dict[tuple[str, str, int], str] = {}  # (form, doc, page): a page's text read once per form

    def seams(self, doc_id: str, pages: list[int]) -> frozenset[Seam]:
        """Layout breaks of the pages (none when page text is unavailable)."""
        return self._breaks(doc_id, pages, page_seams)

    def line_breaks(self, doc_id: str, pages: list[int]) -> frozenset[Seam]:
        """Every line break of the pages (none when page text is unavailable)."""
        return self._breaks(doc_id, pages, line_breaks)

    def _breaks(self, doc_id: str, pages: list[int], find: Callable[[str], frozenset[Seam]]) -> frozenset[Seam]:
        out: frozenset[Seam] = frozenset()
        for page in pages:
            key = (find.__name__, doc_id, page)
            if key not in self._seams:
                text = self.page_text(doc_id, page) if self.page_text else None
                self._seams[key] = find(text) if text else frozenset()
            out |= self._seams[key]
        return out

    def folded(self, doc_id: str, pages: list[int]) -> list[str]:
        """The pages' text, folded as the checker reads it (none when page text is unavailable)."""
        return [text for page in pages if (text := self._form(fold, doc_id, page))]

    def _form(self, form: Callable[[str], str], doc_id: str, page: int) -> str:
        """`form` of a page's text ("" when unavailable), made once per page."""
        key = (form.__name__, doc_id, page)
        if key not in self._forms:
            text = self.page_text(doc_id, page) if self.page_text else None
            self._forms[key] = form(text) if text else ""
        return self._forms[key]

    def in_context(self, doc_id: str, page: int) -> bool:
        return (doc_id, page) in self.context

    def pages(self, doc_id: str, pages: tuple[int, ...]) -> list[SourcePage]:
        """The cited pages' text (the context's passages of a page when its text is unavailable)."""
        key = (doc_id, pages)
        if key not in self._cache:
            found = []
            for page in pages:
                text = self.page_text(doc_id, page) if self.page_text else None
                found.append(SourcePage(doc_id, page, text if text else " ".join(self.context.get((doc_id, page), []))))
            self._cache[key] = found
        return self._cache[key]

    def locate(self, doc_id: str, pages: list[int], *sentences: str) -> list[int]:
        """Where the first of `sentences` that the pages hold is (deterministic substring match):
        the page holding it whole; else the two pages it runs over, starting on one and ending
        on the next; else the page holding its start. The first page when none holds any, or
        page text is unavailable."""
        if len(pages) > 1 and self.page_text is not None:
            texts = [self._form(normalize, doc_id, page) for page in pages]
            for sentence in sentences:
                if found := _located(normalize(sentence), texts):
                    return [pages[i] for i in found]
        return pages[:1] or [0]

    def whole_context(self) -> list[SourcePage]:
        """What an uncited sentence is checked against: every passage of the context."""
        key = ("*", ())
        if key not in self._cache:
            self._cache[key] = [SourcePage("", 0, "\n\n".join(t for ts in self.context.values() for t in ts))]
        return self._cache[key]


def _located(said: str, texts: list[str]) -> list[int]:
    """The indexes of the pages `said` is on (`locate`), [] when none holds its start."""
    if not said:
        return []
    head, tail = said[:80], said[-80:]
    whole = [i for i, text in enumerate(texts) if head in text and tail in text]
    if whole:
        return whole[:1]
    # Short probes across a page break: a long one would straddle it.
    first, last = said[:24], said[-24:]
    for i in range(len(texts) - 1):
        if first in texts[i] and last in texts[i + 1]:
            return [i, i + 1]
    return [i for i, text in enumerate(texts) if head in text][:1]


def _node_of(passages: list[Passage], doc_id: str, page: int) -> str:
    return next((p.node_id for p in passages if p.doc_id == doc_id and page in p.pages), "")


def _file_of(passages: list[Passage], doc_id: str) -> str:
    return next((p.file_name for p in passages if p.doc_id == doc_id and p.file_name), "")


def _abstain(question: str, mode: str, generator: str, reason: str) -> VerifiedAnswer:
    return VerifiedAnswer(
        question=question, answer=ABSTENTION, abstained=True, confidence=0.0,
        warnings=[reason], mode=mode, generator=generator,
    )


def _add(checks: list[SentenceCheck], check: SentenceCheck, listener: SentenceListener | None,
         shown: str) -> None:
    """`check` joins the answer's sentences, and is told at once (with `shown`, its line in the
    answer) to whoever streams the answer."""
    checks.append(check)
    if listener is not None:
        listener(len(checks) - 1, check, shown)


def _extractive(context: CompressedContext, settings: QuerySettings, mode: str, sources: _Sources,
                listener: SentenceListener | None = None) -> VerifiedAnswer:
    question = context.question
    candidates = _candidates(context.passages, sources)
    _rank(question, candidates, context.passages)
    if not candidates:
        return _abstain(question, mode, "extractive", "nothing in the documents matches the question")
    ranked = sorted(candidates, key=lambda c: (-c.relevance, c.order))
    best = ranked[0]
    if best.coverage < MIN_COVERAGE:
        return _abstain(
            question, mode, "extractive",
            f"the best passage covers {best.coverage:.0%} of the question's key terms (< {MIN_COVERAGE:.0%})",
        )
    weights = _term_weights(question, candidates)
    keep_symbols = _wants_symbols(question)
    # A yes/no, "which" or definition question is answered by the sentence that states it,
    # whole; a further sentence only when it holds a question term the first ones lack.
    whole = asks_for_statement(question)
    asked = set(query_terms(question))
    checks: list[SentenceCheck] = []
    lines: list[str] = []
    lead = figure_lead(question, context.passages, sources.page_text)
    limit = settings.max_answer_sentences
    if lead is not None:
        figure, passage, page = lead
        citation = Citation(doc_id=passage.doc_id, file_name=passage.file_name, node_id=passage.node_id, pages=[page])
        said = figure.statement(asked_scale(question))
        lines.append(f"{said} {format_citation(passage.file_name or passage.doc_id, [page])}")
        _add(checks, check_sentence(said, citation, sources.pages(passage.doc_id, (page,)), sources.judge,
                                    sources.word_vectors), listener, lines[-1])
        limit = max(1, limit - 1)
    chosen: list[tuple[_Candidate, str]] = []
    words = 0
    for c in ranked:
        if len(chosen) >= limit or c.relevance < RELATIVE_KEEP * best.relevance:
            break
        if any(len(c.terms & k.terms) / max(len(c.terms | k.terms), 1) >= 0.6 for k, _ in chosen):
            continue  # the same statement twice adds nothing
        if chosen and not keep_symbols and is_symbolic(c.text):
            continue  # a table row or code line does not answer a prose question
        if whole and chosen and not (c.terms & asked) - set().union(*(k.terms for k, _ in chosen)):
            continue  # adds nothing the question asks that the answer does not already say
        shown = _readable(c, sources, weights, keep_symbols, whole)
        size = len(shown.split())
        if chosen and words + size > MAX_ANSWER_WORDS:
            break
        chosen.append((c, shown))
        words += size
        # Checked as soon as it is chosen: a streamed answer shows it while the next is chosen.
        said = shown.strip("… ")
        # The page of what is shown: a sentence of a passage over two pages can start on one
        # and hold the shown part on the next, or run from one onto the next (both cited).
        located = sources.locate(c.passage.doc_id, c.passage.pages, said, c.text)
        citation = Citation(doc_id=c.passage.doc_id, file_name=c.passage.file_name, node_id=c.passage.node_id,
                            pages=located)
        lines.append(f"{shown} {format_citation(c.passage.file_name or c.passage.doc_id, located)}")
        _add(checks, check_sentence(said, citation, sources.pages(c.passage.doc_id, tuple(located)), sources.judge,
                                    sources.word_vectors), listener, lines[-1])
    confidence, warnings = overall(checks)
    answer_coverage = _answer_coverage(question, [c for c, _ in chosen])
    return VerifiedAnswer(
        question=question,
        answer=" ".join(lines),
        citations=_unique([c.citation for c in checks if c.citation]),
        sentences=checks,
        confidence=round(confidence * (0.5 + 0.5 * answer_coverage), 4),
        signals={"figure": 1.0 if lead is not None else 0.0},
        warnings=warnings,
        mode=mode,
        stated=figure_stated(question, lead[0] if lead else None, [shown for _, shown in chosen]),
    )


def _term_weights(question: str, candidates: list[_Candidate]) -> dict[str, float]:
    """IDF of the question's terms over the candidate sentences, for choosing which clauses to show."""
    n = len(candidates)
    return {t: math.log((n + 1) / (sum(t in c.terms for c in candidates) + 0.5)) for t in query_terms(question)}


def _answer_coverage(question: str, chosen: list[_Candidate]) -> float:
    qterms = query_terms(question)
    if not qterms:
        return 0.0
    covered = set().union(*(c.terms for c in chosen)) if chosen else set()
    return sum(t in covered for t in qterms) / len(qterms)


def _unique(citations: list[Citation]) -> list[Citation]:
    seen: dict[tuple[str, tuple[int, ...]], Citation] = {}
    for c in citations:
        seen.setdefault((c.doc_id, tuple(c.pages)), c)
    return list(seen.values())


def _split_generated(text: str) -> list[str]:
    """Sentences of a generated answer; a citation standing alone joins the sentence before."""
    out: list[str] = []
    for sentence in sentences_of(text):
        if out and not strip_citations(sentence):
            out[-1] = f"{out[-1]} {sentence}"
        else:
            out.append(sentence)
    return out


def source_notes(
    question: str, passages: list[Passage], page_text: PageText | None, cards: Mapping[str, DocumentCard]
) -> list[SourceNote]:
    """What a model is told beside each passage: its document's card, and, on the passage the
    offline answer would read a figure from, the table row the question names."""
    lead = figure_lead(question, passages, page_text)
    notes = []
    for passage in passages:
        card = cards.get(passage.doc_id)
        table = ""
        if lead is not None and lead[1] is passage:
            table = f"p. {lead[2]}: {lead[0].described()}"
        notes.append(SourceNote(document=card.describe() if card else "", table=table))
    return notes


@dataclass(frozen=True)
class _Generated:
    """One sentence of a generated answer, checked against the page it cites."""

    check: SentenceCheck | None  # None: the sentence holds nothing but citations
    citation: Citation | None
    plain: str  # the sentence without its citation markers
    warnings: tuple[str, ...]

    def dropped(self, settings: QuerySettings) -> bool:
        return self.check is not None and self.check.verdict == "contradicted" and settings.contradicted == "drop"

    def line(self, settings: QuerySettings) -> str:
        """The sentence as the answer shows it: its marker before the closing stop; "" when the
        answer leaves it out."""
        if self.check is None or self.dropped(settings):
            return ""
        if self.citation is None:
            return self.plain
        mark = format_citation(self.citation.file_name or self.citation.doc_id, self.citation.pages)
        body, end = (self.plain[:-1], self.plain[-1]) if self.plain[-1] in ".!?" else (self.plain, "")
        return f"{body} {mark}{end}"


def _check_generated(sentence: str, passages: list[Passage], sources: _Sources) -> _Generated:
    """`sentence` checked against its first citation to a page of the context (against the whole
    context without one), with the citations removed as outside the context."""
    labels = _label_map(passages)
    warnings: list[str] = []
    citation: Citation | None = None
    for parsed in parse_citations(sentence):
        doc_id = _resolve_doc(parsed.document, labels)
        pages = [p for p in parsed.pages if doc_id and sources.in_context(doc_id, p)]
        if doc_id is None or len(pages) < len(parsed.pages):
            bad = [p for p in parsed.pages if not (doc_id and sources.in_context(doc_id, p))]
            warnings.append(
                f"removed citation to {parsed.document} p. {', '.join(map(str, bad))}: not in the retrieved context"
            )
        if doc_id and pages and citation is None:
            citation = Citation(doc_id=doc_id, file_name=_file_of(passages, doc_id),
                                node_id=_node_of(passages, doc_id, pages[0]), pages=pages)
    plain = strip_citations(sentence)
    if not plain:
        return _Generated(None, citation, plain, tuple(warnings))
    against = sources.pages(citation.doc_id, tuple(citation.pages)) if citation else sources.whole_context()
    check = check_sentence(plain, citation, against, sources.judge, sources.word_vectors)
    return _Generated(check, citation, plain, tuple(warnings))


def _abstains(text: str) -> bool:
    return normalize(ABSTENTION).rstrip(".") in normalize(text)


def _generated(
    context: CompressedContext, settings: QuerySettings, mode: str, sources: _Sources, generator: AnswerGenerator,
    cards: Mapping[str, DocumentCard], listener: SentenceListener | None = None,
    drafts: DraftListener | None = None,
) -> VerifiedAnswer:
    question = context.question
    notes = source_notes(question, context.passages, sources.page_text, cards)
    checked: dict[str, _Generated] = {}  # by sentence: a sentence checked while written is not checked again

    def check(sentence: str) -> _Generated:
        if sentence not in checked:
            checked[sentence] = _check_generated(sentence, context.passages, sources)
        return checked[sentence]

    def checkable(sentence: str) -> _Generated | None:
        found = check(sentence)
        return found if found.check is not None else None

    def tell(index: int, found: _Generated) -> None:
        if listener is not None and found.check is not None:
            listener(index, found.check, found.line(settings))

    written = WrittenSentences(_split_generated, checkable, tell, _abstains)

    def grow(draft: str) -> None:
        if drafts is not None:
            drafts(draft)
        if listener is not None:
            written.grow(draft)

    streaming = listener is not None or drafts is not None
    try:
        with made_from(p.doc_id for p in context.passages):  # the prompt quotes their pages
            text = (generator.generate(question, context.passages, notes, on_text=grow) if streaming
                    else generator.generate(question, context.passages, notes)).strip()
    except Exception as exc:  # the caller decides whether to retry; the answer says what failed
        logger.warning("answer generator failed", exc_info=True)
        raise RuntimeError(f"answer generation failed ({generator.name}): {exc}") from exc
    if not text or _abstains(text):
        return _abstain(question, mode, generator.name, "the generator found no answer in the context")
    warnings: list[str] = []
    checks: list[SentenceCheck] = []
    kept_lines: list[str] = []
    cited: list[Citation] = []  # of the sentences the answer keeps
    for sentence in _split_generated(text):
        found = check(sentence)
        warnings += found.warnings
        if found.check is None:
            continue
        # The sentences told while the answer was written are not told again.
        line = found.line(settings)
        _add(checks, found.check, listener if len(checks) >= written.told else None, line)
        if found.dropped(settings):
            warnings.append(f"dropped a sentence its cited page contradicts: {found.check.reason}")
            continue
        if found.citation:
            cited.append(found.citation)
        kept_lines.append(line)
    confidence, detector_warnings = overall(checks)
    return VerifiedAnswer(
        question=question,
        answer=" ".join(kept_lines),
        citations=_unique(cited),
        sentences=checks,
        confidence=confidence,
        warnings=warnings + detector_warnings,
        mode=mode,
        generator=generator.name,
    )


def answer_question(
    context: CompressedContext,
    settings: QuerySettings,
    mode: str,
    generator: AnswerGenerator | None = None,
    page_text: PageText | None = None,
    judge: EntailmentJudge | None = None,
    word_vectors: WordVectors | None = None,
    cards: Mapping[str, DocumentCard] | None = None,
    on_sentence: SentenceListener | None = None,
    on_draft: DraftListener | None = None,
) -> VerifiedAnswer:
    """The answer to `context.question`, every sentence scored against the page it cites.

    `page_text(doc_id, page)` gives full page text to verify against; without it the compressed
    context is the source. `judge`, an entailment model, settles what the lexical check cannot;
    `word_vectors` tell how close a replaced word is to the page's; `cards` (by document id)
    tell a generator whose documents the passages are. `on_sentence(index, check, shown)` is called
    with each sentence as soon as it is checked, in the answer's order (a streamed answer), `shown`
    being its line in the answer's text (marker included; "" when the answer leaves it out); with a
    generator, a sentence is checked as soon as the model has written it, and `on_draft(text)`
    hears the answer so far as the model writes it (unchecked: each sentence's verdict follows).
    """
    sources = _Sources(context.passages, page_text, judge, word_vectors)
    name = generator.name if generator else "extractive"
    if not context.passages:
        answer = _abstain(context.question, mode, name, "no passage of the documents answers the question")
    elif generator is None:
        answer = _extractive(context, settings, mode, sources, on_sentence)
    else:
        answer = _generated(context, settings, mode, sources, generator, cards or {}, on_sentence, on_draft)
    logger.debug(
        "answered",
        extra=log_fields(abstained=answer.abstained, confidence=answer.confidence, citations=len(answer.citations)),
    )
    return answer
