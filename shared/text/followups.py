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
_REFERENCE = re.compile(r"\b(?:it|its|they|them|their|this|that|these|those|same|there|then|one|ones)\b",
                        re.IGNORECASE)
# Words a whole question leans on the one before it with, that no name can stand in for.
_UNRESOLVED = re.compile(r"\b(?:it|they|them|this|that|these|those|there|then|one|ones)\b", re.IGNORECASE)
# A follow-up that adds a condition to the question before it ("And if the methods package is
# left out?", "and without the header?").
_CONDITION = re.compile(r"^(?:if|when|without|with|unless|after|before|once|while)\b", re.IGNORECASE)
# "a binomial one": the previous question's thing, of another kind.
_ANOTHER_KIND = re.compile(r"^(?:(?P<prep>for|in|with|on|of|to)\s+)?(?:a|an|the)\s+(?P<kind>[\w.-]+)\s+ones?$",
                           re.IGNORECASE)
# Words of a fragment that stand for another value of the same thing ("Stata 14" after "Stata 12").
_NUMBER = re.compile(r"\d[\d.,]*")
SUBJECT_WORDS_MAX = 4
_SAME = re.compile(r"\bthe\s+same\s+", re.IGNORECASE)
# A name: a capitalised word not opening the sentence, or a code or figure-first word ("3M").
_NAME_WORD = re.compile(r"(?<![\w'’])(?:[A-Z][\w&’'-]*|\d+[A-Za-z][\w&-]*)")
_POSSESSIVE = re.compile(r"['’]s$")
_SENTENCE_START = re.compile(r"(?:^|[.?!:;]\s*|\(\s*|[\"'`]\s*)$")
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
    """Runs of adjacent name words, without any period, nor a capitalised word opening a sentence
    of `text` ("Round your answer…"): every sentence's first word is capitalised. `sentence`
    False: `text` is a fragment ("Nike"), whose first word may be a name."""
    periods = period_spans(text)
    words = []
    for m in _NAME_WORD.finditer(text):
        before = text[:m.start()]
        opens = _SENTENCE_START.search(before) is not None and (sentence or before.strip())
        if m.group(0) == "I" or (opens and m.group(0)[:1].isalpha() and not m.group(0).isupper()) \
                or _is_code_of_period(m.group(0)) \
                or any(a <= m.start() < b for a, b in periods):
            continue
        words.append(m)
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
    """The names `text` gives, proper names ("PepsiCo") before codes and units ("USD")."""
    names = [_POSSESSIVE.sub("", text[a:b]) for a, b in _name_runs(text, sentence)]
    return sorted(names, key=lambda name: not any(c.islower() for c in name))


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
    """`previous` about `name` instead of the first name it gives (the question's subject),
    wherever it gives it."""
    runs = _name_runs(previous)
    if not runs:
        return _append(previous, f"for {name}")
    # A proper name ("PepsiCo", "American Water Works") before a code or unit ("USD", "EBITDA").
    proper = [(a, b) for a, b in runs if any(c.islower() for c in previous[a:b])]
    first = (proper or runs)[0]
    old = _POSSESSIVE.sub("", previous[first[0]:first[1]])
    same = [(a, b) for a, b in runs if _POSSESSIVE.sub("", previous[a:b]) == old]
    return "".join(_renamed(previous, same, name))


def _renamed(text: str, spans: list[tuple[int, int]], name: str) -> list[str]:
    out, position = [], 0
    for start, end in spans:
        possessive = "'s" if _POSSESSIVE.search(text[start:end]) else ""
        out += [text[position:start], name + possessive]
        position = end
    return [*out, text[position:]]


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
        question = _POSSESSIVE_PRONOUN.sub(f"{names[0]}'s", question, count=1)
        carried.append(names[0])
    question = _SAME.sub("the ", question)
    if _UNRESOLVED.search(question):
        return question, carried  # what it stands for is in the question before it, not in a name
    if names and not carried and not _names(question):
        question = _append(question, f"for {names[0]}")
        carried.append(names[0])
    periods = period_spans(previous)
    if periods and not period_spans(question):
        period = previous[periods[-1][0]:periods[-1][1]]
        question = _append(question, f"in {period}")
        carried.append(period)
    return question, carried


def _variant(previous: str, fragment: str) -> str | None:
    """`previous` with the change `fragment` asks for, when it is a condition to add, another kind
    of the same thing, or another number of the same name; None otherwise."""
    if _CONDITION.match(fragment):
        return _append(previous, fragment)
    if (kind := _ANOTHER_KIND.match(fragment)) is not None:
        prep = kind.group("prep")
        pattern = rf"\b{prep}\s+(?:a|an|the)\s+" if prep else r"\b(?:a|an|the)\s+"
        for m in re.finditer(pattern, previous, re.IGNORECASE):
            word = _WORD.match(previous, m.end())
            following = _WORD.match(previous, word.end() + 1) if word else None
            if word is not None and following is not None:  # a modifier before the thing's name
                return previous[:word.start()] + kind.group("kind") + previous[word.end():]
        return None
    numbers: list[str] = _NUMBER.findall(fragment)
    words = [w for w in _WORD.findall(fragment) if not _NUMBER.fullmatch(w)]
    if len(numbers) == 1 and words and all(w.lower() in previous.lower() for w in words):
        anchor = re.search(rf"\b{re.escape(words[-1])}\s+(\d[\d.,]*)", previous, re.IGNORECASE)
        if anchor is not None:
            return previous[:anchor.start(1)] + numbers[0] + previous[anchor.end(1):]
    return None


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
        if (variant := _variant(previous, fragment)) is not None:
            return Rewrite(variant, f"the question before it, for {fragment}", names_own=names_own)
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
        if len(_WORD.findall(subject)) > SUBJECT_WORDS_MAX:
            subject = ""  # a clause, not a subject: asked with the question before it beside
        elif len(_WORD.findall(subject)) == 1 and (alike := _with_similar_word(previous, subject)) is not None:
            return Rewrite(alike, f"the question before it, for {subject}", names_own=names_own)
        replaced = (_with_subject(previous, subject) or _with_phrase(previous, subject)) if subject else None
        if replaced is not None:
            return Rewrite(replaced, f"the question before it, asking for {subject}", names_own=names_own)
    completed, carried = _carry(question[lead.end():] if lead else question, previous)
    completed = completed[:1].upper() + completed[1:]
    if _UNRESOLVED.search(completed) or (not carried and lead and lead.group(0).strip()):
        # Nothing to name what "it" stands for: the questions before it say, in the reader's words.
        before = _clipped(f"{previous} {context}".strip(), CONTEXT_MAX_CHARS)
        return Rewrite(f"{completed.rstrip()} (following: {before})", "completed with the question before it",
                       names_own=names_own)
    if not carried and completed == question:
        return Rewrite(question, names_own=names_own)
    reason = f"completed from the question before it ({', '.join(carried)})" if carried else "completed"
    return Rewrite(completed, reason, names_own=names_own)
