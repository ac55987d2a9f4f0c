"""The sentences of an answer a model is still writing, each checked as soon as it is complete.

A sentence is complete once the next one has begun: until then a citation may still follow it
(`[file, p. 3]` after the full stop), or the splitter may read its last full stop otherwise.
Sentences are told in the answer's order, each once. A draft that stops extending the one
before (the model's call was retried, or the text splits otherwise than it did) ends the telling:
the verified answer, which holds every sentence, is the truth.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Generic, TypeVar

Checked = TypeVar("Checked")
# No sentence ends before one of these: the text is split again only once one follows the last
# complete sentence (splitting at every token would cost the square of the answer's length).
_ENDS = re.compile(r"[.!?\u3002\uff01\uff1f]")


class WrittenSentences(Generic[Checked]):
    def __init__(self, split: Callable[[str], list[str]], check: Callable[[str], Checked | None],
                 tell: Callable[[int, Checked], None], stop: Callable[[str], bool]) -> None:
        """`split` gives a text's sentences; `check` one sentence's check (None: nothing to
        check, as a lone citation); `tell(index, checked)` hears each; `stop(draft)` is true of
        a draft whose sentences must not be told (an abstention)."""
        self._split = split
        self._check = check
        self._tell = tell
        self._stop = stop
        self._seen: list[str] = []
        self._open_from = 0  # where the sentence not yet complete starts in the draft
        self._stopped = False
        self.told = 0  # sentences told so far: the first `told` checks of the answer

    def grow(self, draft: str) -> None:
        """Hear the answer so far."""
        if self._stopped:
            return
        if self._stop(draft):
            self._stopped = True
            return
        if len(draft) < self._open_from:  # written again from the start
            self._stopped = True
            return
        if not _ENDS.search(draft, self._open_from):
            return
        complete = self._split(draft)[:-1]
        if complete[: len(self._seen)] != self._seen:
            self._stopped = True
            return
        for sentence in complete[len(self._seen):]:
            self._seen.append(sentence)
            found = draft.find(sentence, self._open_from)
            self._open_from = found + len(sentence) if found >= 0 else self._open_from
            checked = self._check(sentence)
            if checked is not None:
                self._tell(self.told, checked)
                self.told += 1
