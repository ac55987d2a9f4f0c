"""DOCX footnotes and endnotes (word/footnotes.xml, word/endnotes.xml) as text for the page that
cites them.

The body holds only a reference (`w:footnoteReference w:id="2"`); the note's text is in its own
part. Word numbers the notes in the order they are referenced, footnotes 1, 2, 3 and endnotes
i, ii, iii unless the document's settings (`w:footnotePr`, `w:endnotePr` in word/settings.xml)
say otherwise, so each reference is rendered as its mark, "[1]", and the note as "[1] its text".
The separators Word keeps among the notes are not notes.
"""

from __future__ import annotations

from xml.etree import ElementTree

from services.indexer.formats.blocks import one_line
from services.indexer.formats.docx_numbering import format_number
from services.indexer.formats.docx_xml import NoteRef, W, attr, child_attr, read_runs

_NOT_NOTES = frozenset({"separator", "continuationSeparator", "continuationNotice"})
_DEFAULT_FORMAT = {"footnote": "decimal", "endnote": "lowerRoman"}


def _note_texts(root: ElementTree.Element | None, kind: str) -> dict[str, str]:
    texts: dict[str, str] = {}
    if root is None:
        return texts
    for note in root.findall(W + kind):
        if attr(note, "type") in _NOT_NOTES:
            continue
        runs = read_runs(note)
        parts = [runs.text(), *(read_runs(box).text() for box in runs.boxes)]
        texts[attr(note, "id") or ""] = one_line(" ".join(parts))
    return texts


class Notes:
    """The document's notes and the marks given to them as the body cites them."""

    def __init__(self, footnotes: ElementTree.Element | None, endnotes: ElementTree.Element | None,
                 settings: ElementTree.Element | None) -> None:
        self._texts = {"footnote": _note_texts(footnotes, "footnote"), "endnote": _note_texts(endnotes, "endnote")}
        self._formats: dict[str, tuple[str, int]] = {}
        for kind, default in _DEFAULT_FORMAT.items():
            properties = None if settings is None else settings.find(f"{W}{kind}Pr")
            start = child_attr(properties, "numStart")
            self._formats[kind] = (child_attr(properties, "numFmt") or default,
                                   int(start) if start and start.isdigit() else 1)
        self._cited: dict[NoteRef, str] = {}
        self._count = dict.fromkeys(_DEFAULT_FORMAT, 0)

    def cite(self, ref: NoteRef) -> tuple[str, str | None]:
        """The reference's mark ("[1]") and, the first time it is cited, the note's line ("[1] text");
        ("", None) for a reference to no note."""
        if ref in self._cited:
            return self._cited[ref], None
        text = self._texts.get(ref.kind, {}).get(ref.id)
        if text is None:
            return "", None
        fmt, start = self._formats[ref.kind]
        mark = f"[{format_number(start + self._count[ref.kind], fmt) or self._count[ref.kind] + 1}]"
        self._count[ref.kind] += 1
        self._cited[ref] = mark
        return mark, f"{mark} {text}" if text else None
