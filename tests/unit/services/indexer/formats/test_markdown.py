"""The Markdown reader keeps what the text says: names and code as written, every CommonMark
heading form, and none of the markup as text."""

from __future__ import annotations

from services.indexer.formats.blocks import Block
from services.indexer.formats.markdown import read_markdown, read_plain_text

GUIDE = b"""---
title: "Operator guide"
---
Setting up
the pump house
==============

Set `TREERAG_EMBEDDINGS_MODEL` and PUMP_HOUSE_ID before start; `a_b_c` is a code span and
snake_case_words stay whole. Some *emphasis*, some __strong__ text.

---

> ## Safety first
> Close the [intake valve][valve] before opening the housing.

<div class="note">
# not a heading, inside an HTML block
</div>

| Part | Interval |
|------|----------|
| Filter | 6 weeks |

[valve]: https://example.invalid/valve "The valve"
"""


def test_names_and_code_spans_keep_their_underscores_and_emphasis_loses_its_marks() -> None:
    text = " ".join(b.text for b in read_markdown(GUIDE).blocks)
    assert "TREERAG_EMBEDDINGS_MODEL" in text and "PUMP_HOUSE_ID" in text
    assert "a_b_c is a code span" in text and "snake_case_words" in text
    assert "Some emphasis, some strong text." in text


def test_every_heading_form_is_a_heading_and_nothing_else_is() -> None:
    document = read_markdown(GUIDE)
    assert document.title == "Operator guide"
    headings = [(b.text, b.level) for b in document.blocks if b.level]
    assert headings == [("Setting up the pump house", 1), ("Safety first", 2)]


def test_rules_link_targets_and_html_markup_are_not_text() -> None:
    blocks = read_markdown(GUIDE).blocks
    texts = [b.text for b in blocks]
    assert "Close the intake valve before opening the housing." in texts
    assert not any("---" in t or "example.invalid" in t or "<div" in t for t in texts)
    assert Block(text="# not a heading, inside an HTML block") in blocks
    assert "Filter | 6 weeks" in texts


def test_code_blocks_keep_their_lines() -> None:
    blocks = read_markdown(b"# Run\n\n```sh\nexport A_B=1\n# a comment, not a heading\n```\n").blocks
    assert [(b.text, b.level) for b in blocks] == [("Run", 1), ("export A_B=1", 0), ("# a comment, not a heading", 0)]


def test_plain_text_keeps_its_underlines_and_numbered_headings() -> None:
    blocks = read_plain_text(b"Guide\n=====\n\n3.2 Method\n\nThe a_b_c step *stays* as written.\n").blocks
    assert [(b.text, b.level) for b in blocks] == [("Guide", 1), ("3.2 Method", 2), ("The a_b_c step *stays* as written.", 0)]
