"""Spelling slips in a question, corrected against the words of the asked documents.

A question term no document contains is replaced by the document word it misspells (a dropped,
added or swapped letter: `shared.text.names.closest_spelling`). The terms feed lexical matching
and the tree walk; the question's text is rewritten with the documents' own spelling of each
corrected word, so that every other signal read from the text (the dense vector, word pairs)
sees the same words. An embedding model splits an unknown spelling into unrelated pieces, which
pulls the question's vector away from its subject.
"""

from __future__ import annotations

import re

from services.navigator.index import DocumentIndex
from shared.text.lexical import stem, terms
from shared.text.names import closest_spelling
from shared.text.normalize import tokenize

_CACHE_SIZE = 10_000
# Words as a question writes them; a word whose terms were corrected is rewritten whole.
_WORD = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*")


def corrected_terms(qterms: list[str], indexes: list[DocumentIndex]) -> tuple[list[str], dict[str, str]]:
    """Question terms no document contains, replaced by a document word they misspell, and
    the corrections made (term as asked -> term of the documents)."""
    corrections: dict[str, str] = {}
    for term in qterms:
        if any(term in ix.vocabulary for ix in indexes):
            continue
        for ix in indexes:
            cache = _memo(ix, "spelling")
            if term not in cache:
                cache[term] = closest_spelling(term, ix.vocabulary, ix.vocabulary_by_initial)
            if (closest := cache[term]) is not None:
                corrections[term] = closest
                break
    if not corrections:
        return qterms, corrections
    return list(dict.fromkeys(corrections.get(t, t) for t in qterms)), corrections


def written_form(term: str, indexes: list[DocumentIndex]) -> str | None:
    """A word of the documents' pages whose term is `term`, as the first page holding it writes
    it (lower-cased), or None when no page holds it."""
    for ix in indexes:
        cache = _memo(ix, "written_form")
        if term not in cache:
            cache[term] = _first_written(ix, term)
        if cache[term] is not None:
            return cache[term]
    return None


def respelled(question: str, corrections: dict[str, str], indexes: list[DocumentIndex]) -> str:
    """`question` with each misspelt word written as the documents write the word it was
    corrected to; unchanged when nothing was corrected."""
    if not corrections:
        return question

    def replace(match: re.Match[str]) -> str:
        word = match.group(0)
        found = terms(word)
        if len(found) != 1 or found[0] not in corrections:
            return word
        return written_form(corrections[found[0]], indexes) or word

    return _WORD.sub(replace, question)


def _first_written(index: DocumentIndex, term: str) -> str | None:
    postings = index.page_index.postings.get(term)
    if postings is None or not len(postings[0]):
        return None
    page_text = index.pages[int(postings[0][0])]
    return next((token for token in tokenize(page_text) if stem(token) == term), None)


def _memo(index: DocumentIndex, name: str) -> dict[str, str | None]:
    cache = index.memo.setdefault(name, {})
    if len(cache) >= _CACHE_SIZE:
        cache.clear()  # bounded: a long-running navigator sees unbounded new words
    return cache
