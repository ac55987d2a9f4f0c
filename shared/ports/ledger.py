"""Delivery bookkeeping: which messages a stage has finished (for handlers whose work must not
be done twice) and how many times a message was tried (for the retry / dead-letter decision)."""

from __future__ import annotations

from typing import Any, Protocol


class DoneLedger(Protocol):
    async def is_done(self, stage: str, key: str) -> bool: ...

    async def mark_done(self, stage: str, key: str, **info: Any) -> None: ...


class AttemptLedger(Protocol):
    """How many times a consumer group has tried one message, kept where a restarted process
    or another replica finds it (the delivery decisions count against it)."""

    async def begin_attempt(self, group: str, topic: str, partition: int, offset: int) -> int:
        """Count one more attempt at this message; returns the count so far."""
        ...

    async def end_attempts(self, group: str, topic: str, partition: int, offset: int) -> None:
        """The message is finished (handled or dead-lettered): forget its count."""
        ...
