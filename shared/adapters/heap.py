"""A started stage process keeps what it loaded out of the cyclic garbage collector's way.

Models, settings, connections and modules live as long as the process; CPython's collections
walk them again and again (`perf`: 5-8% of the gateway's and the verifier's CPU in the collector). Once a
stage has started they are moved to the permanent generation (`gc.freeze`), which no
collection walks, and the young generation is collected after YOUNG_OBJECTS new containers
instead of CPython's 700: handling one message allocates thousands, nearly all freed by
reference counting before it ends, and a collection every 700 walks the ones still in use again
and again. A frozen object is still freed by reference counting.
"""

from __future__ import annotations

import gc

YOUNG_OBJECTS = 10_000


def freeze_started_heap() -> None:
    """Collect what is garbage now, so none of it is frozen, then freeze what is left."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_OBJECTS, middle, old)
