"""The warm indexes kept out of the cyclic garbage collector's way.

A cached index is many thousands of small objects that live as long as their document's
version: about 270,000 for 50 documents. CPython's full collection walks every tracked object,
about half a second for those, and it falls on whichever query crosses its threshold. Once an
index is built, everything alive is moved to the permanent generation (`gc.freeze`), which no
collection walks.

A frozen object is still freed by reference counting, never by the cyclic collector: an index
the cache forgets (a rebuilt or deleted document) must therefore hold no reference cycle, or it
would stay in memory for good (the query tests check that a forgotten index is freed with the
collector off).
"""

from __future__ import annotations

import gc


def freeze_warm_heap() -> None:
    """Collect what is garbage now, so none of it is frozen, then freeze what is left. The
    collection walks only what was not frozen before: the index just built, mostly."""
    gc.collect()
    gc.freeze()
