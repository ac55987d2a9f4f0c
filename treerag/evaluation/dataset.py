"""Question sets in JSON Lines (format: ../shared/data/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

UNANSWERABLE = "NOT_IN_DOCUMENT"


class QAItem(BaseModel):
    id: str
    doc: str = Field(description="The PDF's file name.")
    question: str
    answer: str
    evidence_pages: list[int] = Field(default_factory=list)
    type: str = "factual"
    company: str | None = Field(default=None, description="The issuer a filing's question is about, when known.")

    @property
    def answerable(self) -> bool:
        return self.answer != UNANSWERABLE and self.type != "unanswerable"


class DatasetError(ValueError):
    pass


def load_dataset(path: str | Path) -> list[QAItem]:
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"dataset {path} does not exist; pass a .jsonl file of questions")
    items: list[QAItem] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(QAItem.model_validate(json.loads(line)))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise DatasetError(f"{path}:{number}: not a question record ({exc.__class__.__name__}: {exc})") from exc
    if not items:
        raise DatasetError(f"dataset {path} holds no questions")
    return items
