"""Sample PDFs rendered from the project's own Markdown documentation.

    python -m treerag.samples --out samples

Writes `treerag-handbook.pdf` (with an outline: bookmarks for every heading) and
`treerag-guide.pdf` (no outline, so the tree must come from the page layout). The README and
docs/*.md are split between the two. Output is deterministic: the same docs give the same bytes,
hence the same document ids.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF

REPO = Path(__file__).resolve().parents[1]
FIXED_DATE = datetime(2025, 1, 1, tzinfo=UTC)
_FONT_DIRS = (Path("/usr/share/fonts"), Path("/usr/local/share/fonts"), Path.home() / ".fonts")
_ASCII_FALLBACKS = {
    "“": '"', "”": '"', "‘": "'", "’": "'", "—": "-", "–": "-", "•": "-", "…": "...",
    "✓": "v", "✗": "x", "≥": ">=", "≤": "<=", "→": "->", "←": "<-", "×": "x", "≈": "~", "±": "+/-",
}


@dataclass(frozen=True)
class Fonts:
    unicode: bool
    sans: str = "Helvetica"
    mono: str = "Courier"


def _find_font(name: str) -> Path | None:
    if shutil.which("fc-match"):
        try:
            found = subprocess.run(
                ["fc-match", "-f", "%{file}", name], capture_output=True, text=True, timeout=10, check=False
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            found = ""
        if found and Path(found).name.lower().startswith(name.lower().split(":")[0].lower()):
            return Path(found)
    for folder in _FONT_DIRS:
        if folder.is_dir():
            match = next(iter(sorted(folder.rglob(f"{name}.ttf"))), None)
            if match:
                return match
    return None


def load_fonts(pdf: FPDF) -> Fonts:
    """DejaVu (Unicode) when installed, else the PDF core fonts with transliterated text."""
    regular, bold, mono = _find_font("DejaVuSans"), _find_font("DejaVuSans-Bold"), _find_font("DejaVuSansMono")
    if regular is None or bold is None:
        return Fonts(unicode=False)
    pdf.add_font("Sans", "", str(regular))
    pdf.add_font("Sans", "B", str(bold))
    if mono is not None:
        pdf.add_font("Mono", "", str(mono))
    return Fonts(unicode=True, sans="Sans", mono="Mono" if mono is not None else "Courier")


def _plain(text: str, fonts: Fonts) -> str:
    if fonts.unicode:
        return text
    for char, replacement in _ASCII_FALLBACKS.items():
        text = text.replace(char, replacement)
    return unicodedata.normalize("NFKD", text).encode("latin-1", "ignore").decode("latin-1")


_LINK = re.compile(r"\[([^\]]+)\]\(([^)]+)\)")
# Underscores inside a word (TREERAG_LLM_MODEL) are not emphasis, as in CommonMark.
_EMPHASIS = re.compile(r"(\*\*|\*)(?=\S)(.+?)(?<=\S)\1|(?<![\w])(__|_)(?=\S)(.+?)(?<=\S)\3(?![\w])")
_CODE_SPAN = re.compile(r"`([^`]+)`")


def _unemphasise(text: str) -> str:
    return _EMPHASIS.sub(lambda match: match.group(2) or match.group(4), text)


def inline(text: str) -> str:
    """Markdown inline markup to plain text: links keep their text, code and emphasis lose marks;
    code spans keep every character they hold."""
    text = _LINK.sub(r"\1", text)
    parts = _CODE_SPAN.split(text)  # even indexes: prose; odd: the inside of a code span
    return "".join(part if index % 2 else _unemphasise(part) for index, part in enumerate(parts))


class _Renderer:
    def __init__(self, title: str, outline: bool) -> None:
        self.pdf = FPDF(format="A4")
        self.pdf.set_creation_date(FIXED_DATE)
        self.pdf.set_title(title)
        self.pdf.set_margins(20, 20, 20)
        self.pdf.set_auto_page_break(auto=True, margin=20)
        self.fonts = load_fonts(self.pdf)
        self.title = title
        self.outline = outline
        header_title = _plain(title, self.fonts)
        fonts = self.fonts

        def header() -> None:  # running header and footer: the layout builder must skip them
            pdf = self.pdf
            if pdf.page_no() == 1:
                return
            pdf.set_font(fonts.sans, "", 8)
            pdf.set_text_color(110)
            pdf.set_y(10)
            pdf.cell(0, 5, header_title, align="R")
            pdf.set_text_color(0)
            pdf.set_y(20)

        def footer() -> None:
            pdf = self.pdf
            if pdf.page_no() == 1:
                return
            pdf.set_y(-14)
            pdf.set_font(fonts.sans, "", 8)
            pdf.set_text_color(110)
            pdf.cell(0, 5, f"Page {pdf.page_no()}", align="C")
            pdf.set_text_color(0)

        self.pdf.header = header  # type: ignore[method-assign]
        self.pdf.footer = footer  # type: ignore[method-assign]

    def text(self, value: str) -> str:
        return _plain(value, self.fonts)

    def title_page(self, subtitle: str) -> None:
        pdf = self.pdf
        pdf.add_page()
        pdf.set_y(90)
        pdf.set_font(self.fonts.sans, "B", 26)
        pdf.multi_cell(0, 13, self.text(self.title), align="C")
        pdf.ln(6)
        pdf.set_font(self.fonts.sans, "", 12)
        pdf.multi_cell(0, 7, self.text(subtitle), align="C")

    def heading(self, level: int, text: str) -> None:
        pdf = self.pdf
        text = self.text(inline(text))
        sizes = {1: 20, 2: 15, 3: 12.5}
        size = sizes.get(level, 11.5)
        if level == 1 or pdf.get_y() > 250:
            pdf.add_page()
        else:
            pdf.ln(4 if level == 2 else 2)
        if self.outline:
            pdf.start_section(text, level=min(level, 3) - 1)
        pdf.set_font(self.fonts.sans, "B", size)
        pdf.multi_cell(0, size * 0.55, text, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)

    def paragraph(self, text: str) -> None:
        self.pdf.set_font(self.fonts.sans, "", 10.5)
        self.pdf.multi_cell(0, 5.4, self.text(inline(text)), new_x="LMARGIN", new_y="NEXT")
        self.pdf.ln(2.2)

    def bullet(self, text: str, depth: int, marker: str) -> None:
        pdf = self.pdf
        pdf.set_font(self.fonts.sans, "", 10.5)
        indent = 6 + 6 * depth
        pdf.set_x(pdf.l_margin + indent - 5)
        pdf.cell(5, 5.4, self.text(marker))
        pdf.multi_cell(0, 5.4, self.text(inline(text)), new_x="LMARGIN", new_y="NEXT")
        pdf.ln(0.8)

    def code(self, lines: list[str]) -> None:
        pdf = self.pdf
        pdf.set_font(self.fonts.mono, "", 8.5)
        pdf.set_fill_color(242, 242, 242)
        for line in lines or [""]:
            pdf.multi_cell(0, 4.4, self.text(line.rstrip()) or " ", fill=True, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2.2)

    def table(self, rows: list[list[str]]) -> None:
        """Rows as aligned plain text: rough, but every cell's text is on the page."""
        pdf = self.pdf
        pdf.set_font(self.fonts.sans, "", 9)
        for row in rows:
            line = "  |  ".join(self.text(inline(cell)) for cell in row)
            pdf.multi_cell(0, 4.8, line, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2.2)

    def output(self) -> bytes:
        return bytes(self.pdf.output())


_LIST_ITEM = re.compile(r"^(\s*)([-*+]|\d+[.)])\s+(.*)$")
_TABLE_RULE = re.compile(r"^\|?\s*:?-{2,}")


def render_markdown(renderer: _Renderer, markdown: str, top_level: int = 1) -> None:
    """Headings (#, ##, ###), paragraphs, lists, fenced code and tables, roughly.
    `top_level` shifts heading levels so a file's '#' becomes that level."""
    lines = markdown.splitlines()
    paragraph: list[str] = []
    i = 0

    def flush() -> None:
        if paragraph:
            renderer.paragraph(" ".join(s.strip() for s in paragraph))
            paragraph.clear()

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("```"):
            flush()
            block: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                block.append(lines[i])
                i += 1
            renderer.code(block)
        elif stripped.startswith("#"):
            flush()
            marks = len(stripped) - len(stripped.lstrip("#"))
            text = stripped[marks:].strip()
            if text:
                renderer.heading(marks + top_level - 1, text)
        elif stripped.startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                if not _TABLE_RULE.match(lines[i].strip()):
                    rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
                i += 1
            renderer.table(rows)
            continue
        elif match := _LIST_ITEM.match(line):
            flush()
            depth = len(match.group(1).expandtabs()) // 2
            marker = "•" if match.group(2) in "-*+" else match.group(2)
            item = [match.group(3)]
            while i + 1 < len(lines) and lines[i + 1].startswith("  ") and lines[i + 1].strip() \
                    and not _LIST_ITEM.match(lines[i + 1]):
                i += 1
                item.append(lines[i].strip())
            renderer.bullet(" ".join(item), depth, marker)
        elif not stripped or stripped.startswith("<!--"):
            flush()
        else:
            paragraph.append(line)
        i += 1
    flush()


def documentation_sources(repo: Path = REPO) -> list[Path]:
    sources = [repo / "README.md"] if (repo / "README.md").is_file() else []
    return sources + sorted((repo / "docs").glob("*.md"))


def _split_sources(sources: list[Path]) -> tuple[list[Path], list[Path]]:
    """README and every other doc with an outline, the rest without: both sides non-empty
    whenever there are two sources."""
    with_outline = sources[0::2]
    without = sources[1::2]
    return with_outline, without


def render(sources: list[Path], title: str, outline: bool) -> bytes:
    renderer = _Renderer(title, outline)
    renderer.title_page("Rendered from the project's documentation: " + ", ".join(p.name for p in sources))
    for source in sources:
        text = source.read_text(encoding="utf-8")
        if not re.search(r"^# ", text, re.M):
            renderer.heading(1, source.stem.replace("-", " ").replace("_", " ").title())
            render_markdown(renderer, text, top_level=2)
        else:
            render_markdown(renderer, text)
    return renderer.output()


def write_samples(out: Path, repo: Path = REPO) -> list[Path]:
    sources = documentation_sources(repo)
    if not sources:
        raise FileNotFoundError(f"no README.md or docs/*.md under {repo}: nothing to render")
    with_outline, without = _split_sources(sources)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    plan = [("treerag-handbook.pdf", "TreeRAG Handbook", with_outline, True)]
    if without:
        plan.append(("treerag-guide.pdf", "TreeRAG Guide", without, False))
    else:  # a single document: render it twice, once without bookmarks, so layout is exercised
        plan.append(("treerag-guide.pdf", "TreeRAG Guide", with_outline, False))
    for name, title, group, outline in plan:
        path = out / name
        path.write_bytes(render(group, title, outline))
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Render the project's Markdown docs into sample PDFs.")
    parser.add_argument("--out", type=Path, default=Path("samples"))
    args = parser.parse_args(argv)
    try:
        paths = write_samples(args.out)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for path in paths:
        print(f"wrote {path} ({path.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
