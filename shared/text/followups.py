"""A follow-up question rewritten into one that stands alone, from the question before it.

In a conversation people leave out what the previous question said: "And in 2017?", "What
about Nike?", "What is its revenue?", "and the operating margin?". The navigator routes and
ranks on the words of one question, so a follow-up is completed first, with these rules:

- a follow-up that gives only a period, a name, or both, is the previous question with its
  period or name replaced ("And in 2017?" after "What is the FY2018 capital expenditure amount
  for 3M?": "What is the FY2017 capital expenditure amount for 3M?");
- one that gives only what is asked about ("and the operating margin?") is the previous
  question with its subject replaced;
- a whole question that leans on the previous one ("What is its revenue?", "How did it change
  in the same table?") gets the names its pronouns stand for, and the previous question's names
  and period when it gives none of its own.

A question that names something of its own and leans on nothing stands as it is. The rewrite
says why it changed the question, so a reader sees what was asked.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from shared.model.query import QUESTION_MAX_CHARS
from shared.text.periods import period_spans

# Words that open a follow-up and carry no content of their own.
_LEAD = re.compile(
    r"^\s*(?:(?:and|also|then|so|now|ok(?:ay)?|but)\b[\s,]*)*"
    r"(?:(?:what|how)\s+about|what\s+of|same\s+(?:for|with|question\s+for)|and\s+for|as\s+for)?\b[\s,]*",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|will|would|has|have"
    r"|had|should|list|name|give|show|tell|describe|explain|compare)\b",
    re.IGNORECASE,
)
_POSSESSIVE_PRONOUN = re.compile(r"\b(?:its|their)\b", re.IGNORECASE)
_REFERENCE = re.compile(r"\b(?:it|its|they|them|their|this|that|these|those|same|there|then)\b", re.IGNORECASE)
_SAME = re.compile(r"\bthe\s+same\s+", re.IGNORECASE)
# A name: a capitalised word not opening the sentence, or a code or figure-first word ("3M").
_NAME_WORD = re.compile(r"(?<![\w'’])(?:[A-Z][\w&’'-]*|\d+[A-Za-z][\w&-]*)")
_POSSESSIVE = re.compile(r"['’]s$")
_FILLER = frozenset("in for of at on during the a an about with to by from as".split())
_STOP_AFTER_TOPIC = frozenset("for of in at on during by from as per to with between among under over".split())
_QUESTION_LEAD = re.compile(
    r"^(?:(?:what|which|how\s+much|how\s+many)\s+(?:is|was|are|were|did|does|do|has|had|have)\s+(?:the\s+)?"
    r"|(?:what|which)\s+(?:the\s+)?)",
    re.IGNORECASE,
)
_FOLLOWING = re.compile(r"\s*\(following: .*\)\s*$")
_WORD = re.compile(r"[\w’'&.-]*\w")
# How much of the questions before a follow-up it carries when nothing names what it leans on.
CONTEXT_MAX_CHARS = 300
# A one-word follow-up this like a word of the question before it takes that word's place.
SIMILAR_WORD = 0.6


@dataclass(frozen=True)
class Rewrite:
    question: str  # what the pipeline is asked: the follow-up completed, or the question as it was
    reason: str = ""  # why it changed, for the reader; "" when it did not
    # The question names something (a name, a period) the previous one did not: it may be about
    # other documents than those the previous answer came from.
    names_own: bool = False

    @property
    def rewritten(self) -> bool:
        return bool(self.reason)


def _name_runs(text: str, sentence: bool = True) -> list[tuple[int, int]]:
    """Runs of adjacent name words, without any period, nor the first word of a `sentence`
    (capitalised as every first word is)."""
    periods = period_spans(text)
    words = [m for m in _NAME_WORD.finditer(text) if (not sentence or text[:m.start()].strip())
             and not any(a <= m.start() < b for a, b in periods) and not _is_code_of_period(m.group(0))]
    runs: list[tuple[int, int]] = []
    for m in words:
        if runs and re.fullmatch(r"[\s&]*|\s+(?:of|and|&)\s+", text[runs[-1][1]:m.start()]):
            runs[-1] = (runs[-1][0], m.end())
        else:
            runs.append((m.start(), m.end()))
    return runs


def _is_code_of_period(word: str) -> bool:
    return bool(re.fullmatch(r"(?:FY|Q[1-4]|H[12])\S*", word))


def _names(text: str, sentence: bool = True) -> list[str]:
    return [_POSSESSIVE.sub("", text[a:b]) for a, b in _name_runs(text, sentence)]


def _content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text) if w.lower() not in _FILLER]


def _replace_spans(text: str, spans: list[tuple[int, int]], new: str) -> str:
    for start, end in reversed(spans):
        text = text[:start] + new + text[end:]
    return text


def _with_period(previous: str, period: str) -> str:
    """`previous` asked for `period` instead of its own (appended when it names none)."""
    spans = period_spans(previous)
    if not spans:
        return _append(previous, f"in {period}")
    old = previous[spans[-1][0]:spans[-1][1]]
    # A bare year takes the old period's form: "FY2018" then "2017" is "FY2017".
    if re.fullmatch(r"(?:19|20)\d\d", period) and re.search(r"(?:19|20)\d\d", old):
        period = re.sub(r"(?:19|20)\d\d", period, old, count=1)
    return _replace_spans(previous, [spans[-1]], period)


def _with_name(previous: str, name: str) -> str:
    runs = _name_runs(previous)
    if not runs:
        return _append(previous, f"for {name}")
    start, end = runs[-1]
    possessive = "'s" if _POSSESSIVE.search(previous[start:end]) else ""
    return _replace_spans(previous, [runs[-1]], name + possessive)


def _with_subject(previous: str, subject: str) -> str | None:
    """`previous` asking about `subject` instead ("What is the FY2018 capital expenditure for
    3M?" and "operating margin"); None when its subject cannot be told apart."""
    lead = _QUESTION_LEAD.match(previous)
    if lead is None:
        return None
    marked = _name_runs(previous) + period_spans(previous)
    start = end = None
    for m in _WORD.finditer(previous, lead.end()):
        inside = any(a <= m.start() < b for a, b in marked)
        if start is None and inside:
            continue  # "What is the FY2018 capital expenditure": the subject starts after the period
        if inside or m.group(0).lower() in _STOP_AFTER_TOPIC:
            break
        start = m.start() if start is None else start
        end = m.end()
    if start is None or end is None:
        return None
    return previous[:start] + subject + previous[end:]


_DETERMINER = re.compile(r"\b(?:the|a|an|its|their)\s+", re.IGNORECASE)
_AUXILIARY = frozenset("is are was were be been do does did has have had can could will would should may might must "
                       "and or".split())
PHRASE_WORDS_MAX = 4


def _with_phrase(previous: str, subject: str) -> str | None:
    """`previous` with its first noun phrase ("the safety valve" in "At what pressure does the
    safety valve of unit 303 open?") replaced by `subject`; None when it has none."""
    marked = _name_runs(previous) + period_spans(previous)
    for determiner in _DETERMINER.finditer(previous):
        end = None
        for count, m in enumerate(_WORD.finditer(previous, determiner.end())):
            word = m.group(0).lower()
            if (count >= PHRASE_WORDS_MAX or word in _STOP_AFTER_TOPIC or word in _AUXILIARY
                    or any(a <= m.start() < b for a, b in marked)):
                break
            if previous[end if end is not None else determiner.end():m.start()].strip(" -"):
                break  # punctuation ends the phrase
            end = m.end()
        if end is not None:
            return previous[:determiner.end()] + subject + previous[end:]
    return None


def _with_similar_word(previous: str, word: str) -> str | None:
    """`previous` with its word most like `word` replaced by it ("lapply" by "sapply"), when one
    is alike enough to be the same kind of thing."""
    best, similarity = None, SIMILAR_WORD
    for m in _WORD.finditer(previous):
        ratio = difflib.SequenceMatcher(None, m.group(0).lower(), word.lower()).ratio()
        if ratio >= similarity and m.group(0).lower() != word.lower():
            best, similarity = m, ratio
    if best is None:
        return None
    return previous[:best.start()] + word + previous[best.end():]


def _append(question: str, words: str) -> str:
    body = question.rstrip().rstrip("?").rstrip()
    return f"{body} {words}?"


def _carry(question: str, previous: str) -> tuple[str, list[str]]:
    """A whole question given the names and period it leans on from `previous`."""
    carried: list[str] = []
    names = _names(previous)
    if names and _POSSESSIVE_PRONOUN.search(question):
        question = _POSSESSIVE_PRONOUN.sub(f"{names[-1]}'s", question, count=1)
        carried.append(names[-1])
    question = _SAME.sub("the ", question)
    if names and not carried and not _names(question):
        question = _append(question, f"for {names[-1]}")
        carried.append(names[-1])
    periods = period_spans(previous)
    if periods and not period_spans(question):
        period = previous[periods[-1][0]:periods[-1][1]]
        question = _append(question, f"in {period}")
        carried.append(period)
    return question, carried


def _clipped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + "…"


def standalone(question: str, previous: str | None) -> Rewrite:
    """`question` completed from the `previous` standalone question of the conversation; never
    longer than a question may be (`QUESTION_MAX_CHARS`): past that it is asked as written."""
    rewrite = _completed(question, previous)
    if len(rewrite.question) > QUESTION_MAX_CHARS:
        return Rewrite(question.strip(), names_own=rewrite.names_own)
    return rewrite


def _completed(question: str, previous: str | None) -> Rewrite:
    question = question.strip()
    context = ""
    if previous:
        # A previous question completed by context: its own words decide, its context is kept.
        if (following := _FOLLOWING.search(previous)) is not None:
            context = following.group(0).strip()[len("(following: "):-1]
        previous = _FOLLOWING.sub("", previous).strip()
    if not previous:
        return Rewrite(question)
    lead = _LEAD.match(question)
    rest = question[lead.end():] if lead else question
    is_question = bool(_QUESTION_START.match(rest))
    own_names = _names(rest, sentence=is_question)
    own_periods = {rest[a:b].lower() for a, b in period_spans(rest)}
    names_own = bool(set(own_names) - set(_names(previous))) or bool(
        own_periods - {previous[a:b].lower() for a, b in period_spans(previous)})
    leans = bool(lead and lead.group(0).strip()) or bool(_REFERENCE.search(rest)) or len(_content_words(rest)) <= 2
    if not leans or (is_question and own_names and not _REFERENCE.search(rest)):
        return Rewrite(question, names_own=names_own)
    if not is_question:
        fragment = rest.strip().rstrip("?.!").strip()
        periods = period_spans(fragment)
        period = fragment[periods[-1][0]:periods[-1][1]] if periods else ""
        leftover = _content_words(_replace_spans(fragment, periods, " "))
        names = _names(_replace_spans(fragment, periods, " "), sentence=False)
        if not leftover or (names and len(leftover) == sum(len(n.split()) for n in names)):
            rewritten = previous
            given = []
            if names:
                rewritten = _with_name(rewritten, " ".join(names))
                given.append(" ".join(names))
            if period:
                rewritten = _with_period(rewritten, period)
                given.append(period)
            if given:
                return Rewrite(rewritten, f"the question before it, for {', '.join(given)}", names_own=names_own)
        subject = re.sub(r"^(?:the|a|an)\s+", "", fragment, flags=re.IGNORECASE)
        if len(_WORD.findall(subject)) == 1 and (alike := _with_similar_word(previous, subject)) is not None:
            return Rewrite(alike, f"the question before it, for {subject}", names_own=names_own)
        replaced = _with_subject(previous, subject) or _with_phrase(previous, subject)
        if replaced is not None:
            return Rewrite(replaced, f"the question before it, asking for {subject}", names_own=names_own)
    completed, carried = _carry(question[lead.end():] if lead else question, previous)
    completed = completed[:1].upper() + completed[1:]
    if not carried and (_REFERENCE.search(completed) or (lead and lead.group(0).strip())):
        # Nothing to name what "it" stands for: the questions before it say, in the reader's words.
        before = _clipped(f"{previous} {context}".strip(), CONTEXT_MAX_CHARS)
        return Rewrite(f"{completed.rstrip()} (following: {before})", "completed with the question before it",
                       names_own=names_own)
    if not carried and completed == question:
        return Rewrite(question, names_own=names_own)
    reason = f"completed from the question before it ({', '.join(carried)})" if carried else "completed"
    return Rewrite(completed, reason, names_own=names_own)
