"""`python -m shared.adapters.embeddings`: load the configured backend once and say what it loaded.

With `TREERAG_EMBEDDINGS=fastembed` or `sentence-transformers` this downloads the model into
`TREERAG_EMBEDDINGS_CACHE` (on a machine that can), so that services started later with the same
settings load it from there.
"""

from __future__ import annotations

import sys

from shared.adapters.embeddings.errors import EmbeddingsConfigError
from shared.adapters.embeddings.factory import make_embedder


def main() -> int:
    try:
        embedder = make_embedder()
    except EmbeddingsConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if embedder is None:
        print("embeddings are off (TREERAG_EMBEDDINGS=off)")
        return 0
    vector = embedder.embed(["a test sentence"])[0]
    print(f"{embedder.name}: {embedder.dimension} dimensions, norm {float((vector**2).sum()) ** 0.5:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
