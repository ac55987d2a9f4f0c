"""Getting one JSON value out of a model's reply, which may wrap it in prose or code fences."""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar, get_origin

from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class NoJSONFound(ValueError):
    """The text holds no parseable JSON object or array."""


def extract_json(text: str) -> Any:
    """The first JSON object or array in `text`: whole text, fenced block, or embedded value."""
    stripped = text.strip()
    candidates = [stripped] + [m.group(1).strip() for m in _FENCE.finditer(text)]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            pass
    decoder = json.JSONDecoder()
    for start, ch in enumerate(text):
        if ch not in "{[":
            continue
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, dict | list):
            return value
    raise NoJSONFound(f"no JSON object or array in the reply (first 120 chars: {text[:120]!r})")


def _single_list_field(schema: type[BaseModel]) -> str | None:
    fields = schema.model_fields
    if len(fields) != 1:
        return None
    name, info = next(iter(fields.items()))
    return name if get_origin(info.annotation) is list else None


def parse_model(text: str, schema: type[T]) -> T:
    """Validate the reply against `schema`.

    Small local models often answer `[...]` where `{"items": [...]}` was asked: a bare array is
    accepted when the schema is an object with one list field.
    Raises `NoJSONFound` or pydantic's `ValidationError`.
    """
    value = extract_json(text)
    if isinstance(value, list):
        field = _single_list_field(schema)
        if field is not None:
            value = {field: value}
    return schema.model_validate(value)
