"""Dense text embeddings behind the `Embedder` port (shared/ports.py).

Backends, chosen by `TREERAG_EMBEDDINGS`:
- `wordllama` (default): static 256-d word embeddings whose weights ship inside the `wordllama`
  wheel, so they load with no network at all;
- `fastembed`, `sentence-transformers`: stronger contextual models for deployments that can
  download a model once (or point `TREERAG_EMBEDDINGS_PATH` at a folder holding one);
- `off`: no vectors are computed or stored.

`python -m shared.adapters.embeddings` loads the configured backend once (downloading its model into
`TREERAG_EMBEDDINGS_CACHE` when it needs one) and prints what it loaded.
"""

from shared.adapters.embeddings.document import embed_document
from shared.adapters.embeddings.errors import EmbeddingsConfigError
from shared.adapters.embeddings.factory import make_embedder

__all__ = ["EmbeddingsConfigError", "embed_document", "make_embedder"]
