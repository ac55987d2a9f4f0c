"""Small generated collections for the ranking and cross-validation tests: every document opens
with a contents page that names every section (it matches every question and answers none),
then one page per section holding one fact."""

from __future__ import annotations

from services.navigator.index import DocumentIndex
from tests.query.conftest import build
from tests.query.documents import FILLER, indexed, node
from treerag.evaluation.dataset import QAItem

MACHINES = ("pump", "valve", "boiler", "fan", "turbine", "compressor")
DISHES = ("bread", "pie", "cake", "tart", "scone", "bun")


def _document(doc_id: str, name: str, topics: tuple[str, ...], fact: str) -> DocumentIndex:
    contents = "Contents\n" + "\n".join(f"{k + 1} The {t} ........ {k + 2}" for k, t in enumerate(topics))
    pages = [contents] + [f"{k + 1} The {t}\n{fact.format(topic=t, n=10 + 7 * k)} {FILLER}"
                          for k, t in enumerate(topics)]
    nodes = [node("0000", "Contents", 1, 1)] + [
        node(f"{k + 1:04d}", f"{k + 1} The {t}", k + 2, k + 2) for k, t in enumerate(topics)
    ]
    return build(indexed(doc_id, name, pages, nodes))


def plant_collection(documents: int = 4) -> tuple[list[QAItem], dict[str, DocumentIndex]]:
    items, indexes = [], {}
    for d in range(documents):
        name = f"plant-{d}.pdf"
        indexes[name] = _document(f"{d:016x}", name, MACHINES, "Each {topic} is serviced every {n} hours by the crew.")
        items += [QAItem(id=f"p{d}-{k}", doc=name, question=f"How often is the {t} serviced by the crew?",
                         answer=str(10 + 7 * k), evidence_pages=[k + 2]) for k, t in enumerate(MACHINES)]
    return items, indexes


def kitchen_collection(documents: int = 4) -> tuple[list[QAItem], dict[str, DocumentIndex]]:
    items, indexes = [], {}
    for d in range(documents):
        name = f"kitchen-{d}.pdf"
        indexes[name] = _document(f"{d + 100:016x}", name, DISHES, "The {topic} is baked at {n}0 degrees in the oven.")
        items += [QAItem(id=f"k{d}-{k}", doc=name, question=f"At what temperature is the {t} baked in the oven?",
                         answer=f"{10 + 7 * k}0", evidence_pages=[k + 2]) for k, t in enumerate(DISHES)]
    return items, indexes
