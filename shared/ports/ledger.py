"""Which messages a stage has finished, for handlers whose work must not be done twice."""

from __future__ import annotations

from typing import Any, Protocol


class DoneLedger(Protocol):
    async def is_done(self, stage: str, key: str) -> bool: ...

    async def mark_done(self, stage: str, key: str, **info: Any) -> None: ...
