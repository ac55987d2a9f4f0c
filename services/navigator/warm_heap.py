"""The warm indexes kept out of the cyclic garbage collector's way.

A cached index is many thousands of small objects that live as long as their document's
version: about 270,000 for 50 documents. CPython's full collection walks every tracked object,
about half a second for those, and it falls on whichever query crosses its threshold. Once an
index is built, everything alive is moved to the permanent generation (`gc.freeze`), which no
collection walks.

A frozen object is still freed by reference counting, never by the cyclic collector: an index
the cache forgets (a rebuilt or deleted document) must therefore hold no reference cycle, or it
would stay in memory for good (the query handler tests check that a forgotten index is freed
with the collector off). What else is alive when an index is frozen and later becomes cyclic
garbage (the objects of a query in flight) stays too: a bounded cost paid per index built.

The young generation is collected after YOUNG_OBJECTS new containers instead of CPython's 700
(shared/adapters/heap.py, which every stage applies once started).
"""

from __future__ import annotations

import gc

from shared.adapters.heap import YOUNG_OBJECTS


def freeze_warm_heap() -> None:
    """Collect what is garbage now, so none of it is frozen, then freeze what is left. The
    collection walks only what was not frozen before: the index just built, mostly."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_OBJECTS, middle, old)
