"""One-process indexing without the CLI: `python -m bench.index_in_process STORE FILE...`.

The benchmark uses `treerag index` when the CLI has it; this is the same domain call
(`index_pdf` into the embedded store) for checkouts where the command is not there yet.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path


async def index_files(store: Path, files: list[Path]) -> None:
    from services.indexer.pipeline import index_pdf
    from shared.adapters.embedded.store import EmbeddedRepository

    repository = EmbeddedRepository(store)
    for path in files:
        await repository.put_indexed(index_pdf(path.read_bytes(), path.name))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2:
        print("usage: python -m bench.index_in_process STORE FILE.pdf...", file=sys.stderr)
        return 2
    asyncio.run(index_files(Path(args[0]), [Path(a) for a in args[1:]]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
