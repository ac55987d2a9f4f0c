"""`treerag chat`: a conversation in the terminal, follow-ups completed and shown."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from services.indexer.pipeline import index_pdf
from shared.adapters.embedded.store import EmbeddedRepository
from tests.support.integration.pdfs import manual_pdf


async def test_a_follow_up_is_completed_shown_and_answered(tmp_path: Path) -> None:
    await EmbeddedRepository(tmp_path).put_indexed(index_pdf(manual_pdf(unit=303), "unit-303.pdf"))
    lines = "At what pressure does the safety valve of unit 303 open?\nAnd the coolant pump?\n"
    done = subprocess.run([sys.executable, "-m", "treerag", "chat", "--store", str(tmp_path)], input=lines,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.split("(asked: ")
    assert "[unit-303.pdf, p. 2]" in first
    assert second.startswith("At what pressure does the coolant pump of unit 303 open?)") or \
        "coolant pump" in second.splitlines()[0]
    assert "unit-303.pdf" in second


def test_chat_without_a_store_says_how_to_make_one(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "treerag", "chat", "--store", str(tmp_path / "none")],
                          input="Hi?\n", capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "treerag index" in done.stderr
