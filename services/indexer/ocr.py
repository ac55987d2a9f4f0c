"""Recognising pages that have no text layer, with Tesseract (Debian's `tesseract-ocr`).

Tesseract was chosen on measurement (`python -m bench.ocr`, docs/indexing.md): on scanned
pages of the R manuals at 300 dpi it reads 0.99+ of the characters right at ≈1.4 CPU-seconds
a page, where RapidOCR (ONNX models in its wheel) read 0.96 at ≈9 CPU-seconds a page.

Each page is one `tesseract` process fed a PGM image on stdin (no temporary files), limited to one
thread; pages run in parallel processes, so recognition uses every core without the GIL.
Tesseract's TSV output gives a box for every word, from which each line gets a text size: the
layout builder then finds headings on scanned pages as it does on born-digital ones. The words
and their boxes are kept too, as the page's text layer (selection and highlights in the viewer).
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field

from PIL import Image

logger = logging.getLogger(__name__)

# 300 dpi: Tesseract's own recommendation; at 200 dpi small print loses accuracy.
OCR_DPI = 300
# A page that does not finish in this time is given up (it stays empty, with a warning).
_PAGE_TIMEOUT_S = 300.0
# Word confidence below this (0-100) is noise: speckles and rules read as letters.
_MIN_CONFIDENCE = 10.0

# Share of the em a word's box spans, by which letter shapes it holds: Latin fonts have an
# x-height near 0.5 em, capitals and ascenders near 0.72 em and descenders near 0.22 em. Dividing
# a word's box height by this share estimates the font size whichever letters the word has.
_ASCENDING = frozenset("bdfhiklt0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ()[]{}/\\|!?&%$#@'\"")
_DESCENDING = frozenset("gjpqy()[]{}|,;")


def _em_share(word: str) -> float:
    letters = set(word)
    share = 0.72 if letters & _ASCENDING else 0.5
    return share + (0.22 if letters & _DESCENDING else 0.0)


@dataclass(slots=True)
class OcrLine:
    text: str
    size: float  # estimated font size in points
    left: float  # points from the left edge
    top: float  # points from the top edge


@dataclass(frozen=True, slots=True)
class OcrWord:
    """One recognised word and its box, in points from the page's top-left corner."""

    text: str
    left: float
    top: float
    width: float
    height: float


@dataclass(slots=True)
class OcrPage:
    text: str
    lines: list[OcrLine] = field(default_factory=list)
    words: list[list[OcrWord]] = field(default_factory=list)  # each line's words, as `lines`
    error: str = ""  # why the page could not be recognised, "" when it was


class OcrNotInstalledError(RuntimeError):
    """TREERAG_OCR=auto found pages without text but no engine to read them."""


def find_tesseract() -> str | None:
    return shutil.which("tesseract")


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def _pgm(image: Image.Image) -> bytes:
    gray = image if image.mode == "L" else image.convert("L")
    return b"P5\n%d %d\n255\n" % gray.size + gray.tobytes()


def parse_tsv(tsv: str, dpi: int) -> OcrPage:
    """Tesseract's TSV (one row per word, grouped by block, paragraph and line) -> text and lines."""
    to_points = 72.0 / dpi
    lines: dict[tuple[str, str, str], list[tuple[str, float, float, float, float]]] = {}
    for row in tsv.splitlines()[1:]:
        cols = row.split("\t")
        if len(cols) < 12 or cols[0] != "5":
            continue
        word = cols[11].strip()
        if not word:
            continue
        try:
            conf = float(cols[10])
            left, top, width, height = float(cols[6]), float(cols[7]), float(cols[8]), float(cols[9])
        except ValueError:
            continue
        if conf < _MIN_CONFIDENCE:
            continue
        lines.setdefault((cols[2], cols[3], cols[4]), []).append((word, left, top, width, height))
    result: list[OcrLine] = []
    boxed: list[list[OcrWord]] = []
    for words in lines.values():
        sizes = sorted(h / _em_share(w) for w, _, _, _, h in words)
        result.append(
            OcrLine(
                text=" ".join(w for w, _, _, _, _ in words),
                size=round(sizes[len(sizes) // 2] * to_points * 2) / 2,
                left=min(x for _, x, _, _, _ in words) * to_points,
                top=min(y for _, _, y, _, _ in words) * to_points,
            )
        )
        boxed.append([OcrWord(w, x * to_points, y * to_points, wd * to_points, h * to_points) for w, x, y, wd, h in words])
    return OcrPage(text="\n".join(line.text for line in result), lines=result, words=boxed)


# Sizes measured from word boxes vary by about ±4 % for one font size (glyph shapes, scan noise);
# the layout builder compares exact sizes, so sizes this close are one size.
_SAME_SIZE = 0.05


def snap_sizes(lines: list[OcrLine]) -> None:
    """Give lines of one printed size one measured size: the most used size absorbs every size
    within ±5 % of it, then the most used of the rest, and so on (no chaining from size to size)."""
    weight: dict[float, int] = {}
    for line in lines:
        weight[line.size] = weight.get(line.size, 0) + len(line.text)
    snapped: dict[float, float] = {}
    for center in sorted(weight, key=lambda size: (-weight[size], size)):
        if center in snapped:
            continue
        for size in weight:
            if size not in snapped and abs(size - center) <= _SAME_SIZE * center:
                snapped[size] = center
    for line in lines:
        line.size = snapped[line.size]


class TesseractOcr:
    """Page images in, recognised text and lines out; `workers` pages at a time."""

    def __init__(self, binary: str, languages: str = "eng", workers: int = 0, dpi: int = OCR_DPI) -> None:
        self.binary = binary
        self.languages = languages
        self.workers = workers or default_workers()
        self.dpi = dpi
        # One thread per process: parallel pages use the cores better than OpenMP inside one.
        self._env = {**os.environ, "OMP_THREAD_LIMIT": "1"}

    def recognise_one(self, image: Image.Image) -> OcrPage:
        command = [self.binary, "stdin", "stdout", "--dpi", str(self.dpi), "-l", self.languages, "tsv"]
        try:
            done = subprocess.run(
                command, input=_pgm(image), capture_output=True, env=self._env, timeout=_PAGE_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            return OcrPage(text="", error=f"OCR took longer than {_PAGE_TIMEOUT_S:.0f} s")
        except OSError as exc:
            return OcrPage(text="", error=f"tesseract could not start ({exc})")
        if done.returncode != 0:
            reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
            return OcrPage(text="", error=f"tesseract failed ({reason[-1] if reason else done.returncode})")
        return parse_tsv(done.stdout.decode("utf-8", "replace"), self.dpi)

    @contextmanager
    def beside(self) -> Iterator[OcrQueue]:
        """A queue of pages to recognise while the caller goes on with other work."""
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            yield OcrQueue(pool, self.recognise_one, 2 * self.workers)


class OcrQueue:
    """Page images handed to the engine's workers as they come; results in the order given.
    `put` returns the results that had to be waited for to keep at most `held` images."""

    def __init__(self, pool: ThreadPoolExecutor, recognise_one: Callable[[Image.Image], OcrPage], held: int) -> None:
        self.pool = pool
        self.recognise_one = recognise_one
        self.held = held
        self._pending: deque[Future[OcrPage]] = deque()

    def put(self, image: Image.Image) -> list[OcrPage]:
        ready = []
        while len(self._pending) >= self.held:
            ready.append(self._pending.popleft().result())
        self._pending.append(self.pool.submit(self.recognise_one, image))
        return ready

    def drain(self) -> list[OcrPage]:
        ready = [future.result() for future in self._pending]
        self._pending.clear()
        return ready


def make_ocr(mode: str, languages: str = "eng", workers: int = 0) -> TesseractOcr | None:
    """The engine for `TREERAG_OCR`: None when off. Raises OcrNotInstalledError when `auto`
    finds no tesseract binary, so the caller can say how to install it."""
    if mode == "off":
        return None
    binary = find_tesseract()
    if binary is None:
        raise OcrNotInstalledError(
            "no OCR engine installed: install Debian's tesseract-ocr (`make ocr`) or set TREERAG_OCR=off"
        )
    return TesseractOcr(binary, languages=languages, workers=workers)
