"""A labelled set for the verifier, generated from the dev PDFs' pages (never stored).

From every PDF under ../shared/data/pdfs a few statements are drawn (seeded by the file name,
so the set is the same on every run). Each one yields items `(sentence, page, label, kind)`:

- supported: `verbatim` (the statement against its own page) and `paraphrase` (the statement
  rewritten by generic transformations: a leading phrase moved to the end, a parenthesis or a
  trailing clause dropped, contractions, common synonyms, an attribution prefix);
- unsupported: `number` (one digit of one number changed), `name` (one name or identifier
  swapped for another of the same document that the page never mentions), `negation` (a "not"
  added after the first auxiliary, or removed), `direction` (one direction word turned around:
  increase/decrease, before/after...), `word` (one content word swapped for another word of the
  same document that the page never uses), `wrong_page` (a statement of another page of the same
  document), `unrelated` (a statement of another document).

The perturbations use their own simple patterns, not the verifier's parsers, so the set does
not only test what the checks already look for. Each item carries its document for folds.

Beside the generated items, `bench/grounding/handwritten-v1.jsonl` holds sentences written by
hand against statements of the dev PDFs (evidence quotes of the dev question sets and statements
of other documents' pages), each with its document, page and original: `hand_paraphrase`
(rewordings a reader accepts as supported: reordering, synonyms, voice, two clauses summarised,
a negation said another way) and `hand_changed` (one realistic word or role changed: an antonym,
a related but wrong word, the action reversed). They are reported apart from the generated kinds.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from services.indexer.extract import extract_content, open_document
from shared.text.lexical import sentences_of

SUPPORTED_KINDS = ("verbatim", "paraphrase", "hand_paraphrase")
GENERATED_KINDS = ("verbatim", "paraphrase", "number", "name", "negation", "direction", "word", "wrong_page",
                   "unrelated")
HANDWRITTEN_KINDS = ("hand_paraphrase", "hand_changed")
KINDS = GENERATED_KINDS + HANDWRITTEN_KINDS
HANDWRITTEN = Path(__file__).with_name("grounding") / "handwritten-v1.jsonl"
STATEMENTS_PER_DOCUMENT = 8
MIN_WORDS, MAX_WORDS = 8, 45
MIN_PAGE_WORDS = 80
MAX_PAGES = 5000

_WORD = re.compile(r"^[(\"']*[A-Za-z][a-z]+[)\"',.;:]*$")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")
_NAME = re.compile(r"(?<=[a-z,]\s)(?:[A-Z][a-zA-Z]{2,}|[A-Za-z]+_[\w]+|[A-Z]{2,}[A-Za-z0-9]*)(?=[\s,.;:)])")
_AUX = re.compile(r"\b(is|are|was|were|can|will|should|must|may|does|do|did|has|have|could|would)\b(?! (?:not|no|never)\b)")
_NEGATED = re.compile(r"\s+not\b|\bcannot\b|n't\b|\s+never\b")
_DIRECTION_PAIRS = (("increase", "decrease"), ("increased", "decreased"), ("increases", "decreases"),
                    ("higher", "lower"), ("more", "less"), ("before", "after"), ("above", "below"),
                    ("maximum", "minimum"), ("larger", "smaller"), ("first", "last"), ("earlier", "later"))
_SYNONYMS = (("use", "employ"), ("uses", "employs"), ("used", "employed"), ("show", "display"),
             ("shows", "displays"), ("begin", "start"), ("also", "additionally"), ("however", "but"),
             ("approximately", "about"), ("such as", "like"), ("because", "since"), ("obtain", "get"),
             ("provide", "give"), ("provides", "gives"), ("require", "need"), ("requires", "needs"),
             ("large", "big"), ("whether", "if"), ("therefore", "so"), ("in order to", "to"))
_CONTRACTIONS = (("does not", "doesn't"), ("is not", "isn't"), ("are not", "aren't"), ("cannot", "can't"),
                 ("do not", "don't"), ("will not", "won't"), ("it is", "it's"))


@dataclass(frozen=True)
class Item:
    doc: str
    page: int
    sentence: str
    page_text: str
    kind: str
    supported: bool


def _rng(*keys: object) -> random.Random:
    seed = hashlib.sha256("|".join(map(str, keys)).encode()).digest()
    return random.Random(int.from_bytes(seed[:8], "big"))


def _is_statement(sentence: str) -> bool:
    words = sentence.split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS or not sentence[0].isupper() or sentence[-1] not in ".!?":
        return False
    return sum(bool(_WORD.match(w)) for w in words) / len(words) >= 0.6


@lru_cache(maxsize=128)
def _page_texts(pdf: Path) -> list[str]:
    document = open_document(pdf.read_bytes(), MAX_PAGES)
    try:
        return extract_content(document, with_layout=False, outline=[]).pages
    finally:
        document.close()


def _drawn(doc: str, pages: list[str]) -> list[tuple[int, str]]:
    """Up to STATEMENTS_PER_DOCUMENT statements from distinct pages of a document."""
    rng = _rng("pages", doc)
    order = [i for i, text in enumerate(pages) if len(text.split()) >= MIN_PAGE_WORDS]
    rng.shuffle(order)
    out: list[tuple[int, str]] = []
    for index in order:
        candidates = [s for s in sentences_of(pages[index]) if _is_statement(s)]
        if candidates:
            out.append((index + 1, rng.choice(candidates)))
        if len(out) >= STATEMENTS_PER_DOCUMENT:
            break
    return out


def _word_swap(sentence: str, pairs: tuple[tuple[str, str], ...], both_ways: bool) -> str | None:
    for a, b in pairs:
        for x, y in ((a, b), (b, a)) if both_ways else ((a, b),):
            # Lower case only: a capitalised word may be part of a name ("Land Use Plan").
            pattern = re.compile(rf"(?<![A-Z][a-z]\s)\b{re.escape(x)}\b")
            if pattern.search(sentence):
                return pattern.sub(lambda m, y=y: y.capitalize() if m.group(0)[0].isupper() else y, sentence, count=1)
    return None


def _move_leading_phrase(sentence: str) -> str | None:
    head, sep, rest = sentence.partition(", ")
    # A comma inside a date or a number is not the end of a leading phrase.
    if not sep or len(head.split()) > len(sentence.split()) * 0.4 or len(rest.split()) < 5 or rest[0].isdigit():
        return None
    end = rest[-1] if rest[-1] in ".!?" else ""
    body = rest[:-1] if end else rest
    return f"{body[0].upper()}{body[1:]} {head[0].lower()}{head[1:]}{end}"


def _drop_aside(sentence: str) -> str | None:
    dropped = re.sub(r"\s*\([^()]{2,80}\)", "", sentence, count=1)
    if dropped != sentence:
        return dropped
    head, sep, tail = sentence.rpartition(", ")
    if sep and len(head.split()) >= 6 and len(tail.split()) >= 3 and not tail[0].isdigit():
        return head + "."
    return None


def _attribute(sentence: str) -> str:
    return f"According to the document, {sentence[0].lower()}{sentence[1:]}"


def paraphrase(sentence: str, rng: random.Random) -> str:
    """Two generic rewrites of the sentence (those that apply), in a seeded order."""
    steps = [_move_leading_phrase, _drop_aside, lambda s: _word_swap(s, _SYNONYMS, False),
             lambda s: _word_swap(s, _CONTRACTIONS, True), _attribute]
    rng.shuffle(steps)
    out, applied = sentence, 0
    for step in steps:
        changed = step(out)
        if changed and changed != out:
            out, applied = changed, applied + 1
        if applied == 2:
            break
    return out


def change_number(sentence: str, rng: random.Random) -> str | None:
    found = list(_NUMBER.finditer(sentence))
    if not found:
        return None
    m = rng.choice(found)
    digits = [i for i, c in enumerate(m.group(0)) if c.isdigit()]
    # The last digit of short numbers, a middle one of long ones (a year or an amount).
    at = digits[-1] if len(digits) <= 2 else rng.choice(digits[1:])
    old = int(m.group(0)[at])
    new = (old + rng.randint(1, 9)) % 10
    text = m.group(0)[:at] + str(new) + m.group(0)[at + 1 :]
    return sentence[: m.start()] + text + sentence[m.end() :]


def swap_name(sentence: str, page: str, pool: list[str], rng: random.Random) -> str | None:
    names = [m for m in _NAME.finditer(f" {sentence}") if m.group(0).lower() not in {"the", "this", "these"}]
    page_words = set(re.findall(r"[\w]+", page.lower()))
    others = [n for n in pool if n.lower() not in page_words]
    if not names or not others:
        return None
    m = rng.choice(names)
    replacement = rng.choice(others)
    text = f" {sentence}"
    return (text[: m.start()] + replacement + text[m.end() :]).strip()


_CONTENT_WORD = re.compile(r"(?<=\s)[a-z]{5,}(?=[\s,.;:])")


def swap_word(sentence: str, page: str, pool: list[str], rng: random.Random) -> str | None:
    """One lower-case content word replaced by a word of the document that the page never uses."""
    words = list(_CONTENT_WORD.finditer(f" {sentence}"))
    page_words = set(re.findall(r"[a-z]+", page.lower()))
    others = [w for w in pool if w not in page_words]
    if not words or not others:
        return None
    m = rng.choice(words)
    text = f" {sentence}"
    return (text[: m.start()] + rng.choice(others) + text[m.end() :]).strip()


def flip_negation(sentence: str) -> str | None:
    if _NEGATED.search(sentence):
        def drop(m: re.Match[str]) -> str:
            word = m.group(0)
            return "can" if word == "cannot" else ""
        return _NEGATED.sub(drop, sentence, count=1)
    m = _AUX.search(sentence)
    if not m:
        return None
    return sentence[: m.end()] + " not" + sentence[m.end() :]


def generate(pdf_root: Path) -> Iterator[Item]:
    """Every item of the set, in a fixed order."""
    documents: dict[str, list[str]] = {}
    for pdf in sorted(pdf_root.rglob("*.pdf")):
        documents[pdf.name] = _page_texts(pdf)
    drawn = {doc: _drawn(doc, pages) for doc, pages in documents.items()}
    names = sorted(drawn)
    for d, doc in enumerate(names):
        pages = documents[doc]
        pool = sorted({m.group(0) for _, s in drawn[doc] for m in _NAME.finditer(f" {s}")}
                      | {m.group(0) for p in pages[:60] for m in _NAME.finditer(p)})
        vocabulary = sorted({m.group(0) for p in pages[:60] for m in _CONTENT_WORD.finditer(p)})
        for k, (page, sentence) in enumerate(drawn[doc]):
            rng = _rng("item", doc, page)
            text = pages[page - 1]
            yield Item(doc, page, sentence, text, "verbatim", True)
            rewritten = paraphrase(sentence, rng)
            if rewritten != sentence:
                yield Item(doc, page, rewritten, text, "paraphrase", True)
            for kind, changed in (
                ("number", change_number(sentence, rng)),
                ("name", swap_name(sentence, text, pool, rng)),
                ("negation", flip_negation(sentence)),
                ("direction", _word_swap(sentence, _DIRECTION_PAIRS, True)),
                ("word", swap_word(sentence, text, vocabulary, rng)),
            ):
                if changed and changed != sentence:
                    yield Item(doc, page, changed, text, kind, False)
            others = [(p, s) for p, s in drawn[doc] if p != page]
            if others:
                other_page, other = others[k % len(others)]
                yield Item(doc, page, other, text, "wrong_page", False)
            foreign = drawn[names[(d + 7) % len(names)]] if len(names) > 1 else []
            if foreign:
                yield Item(doc, page, foreign[k % len(foreign)][1], text, "unrelated", False)


def handwritten(pdf_root: Path, path: Path = HANDWRITTEN) -> Iterator[Item]:
    """The hand-written items, each against its page (the original must be on it)."""
    pdfs = {pdf.name: pdf for pdf in pdf_root.rglob("*.pdf")}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        row = json.loads(line)
        pages = _page_texts(pdfs[row["doc"]])
        text = pages[row["page"] - 1]
        if " ".join(row["original"].split()) not in " ".join(text.split()):
            raise ValueError(f"{path}:{number}: the original is not on page {row['page']} of {row['doc']}")
        yield Item(row["doc"], row["page"], row["sentence"], text, f"hand_{row['kind']}", bool(row["supported"]))
