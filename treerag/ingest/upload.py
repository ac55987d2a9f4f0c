"""Sending files to a gateway: in batches of several files per request, retried with backoff,
and resumable.

What the gateway accepted is written to a state file after every batch, keyed by the gateway's
URL and each file's content hash (the document id): running the same upload again, after an
interruption or with new files added, sends only what was not accepted yet, whatever the files
are called or where they moved. A file the gateway refuses (not a PDF, too large) is reported
and not retried; a request that fails as a whole (connection lost, 5xx, 429) is retried.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from pydantic import BaseModel, Field, ValidationError

from shared.app.retry import RETRYABLE_STATUS, RetryPolicy, parse_retry_after
from shared.model.formats import EXTENSIONS, MEDIA_TYPES
from shared.model.ids import content_id

logger = logging.getLogger("treerag.upload")



class UploadAbortedError(RuntimeError):
    """The gateway refused every request (a wrong key or URL): retrying cannot help."""


class UploadGaveUpError(RuntimeError):
    """The gateway stayed unreachable (or kept failing) through every retry."""


class UploadState(BaseModel):
    """Content hashes (document ids) the gateway has accepted, per gateway URL."""

    accepted: dict[str, dict[str, str]] = Field(
        default_factory=dict, description="url -> content hash of a file -> the doc id the gateway gave it")

    @classmethod
    def load(cls, path: Path) -> UploadState:
        if not path.is_file():
            return cls()
        try:
            return cls.model_validate_json(path.read_bytes())
        except ValidationError as exc:
            raise ValueError(f"{path} is not an upload state file ({exc.error_count()} errors); "
                             "pass another --state or delete it to upload everything again") from exc

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + f".{os.getpid()}.tmp")
        tmp.write_text(self.model_dump_json(indent=1))
        os.replace(tmp, path)

    def for_url(self, url: str) -> dict[str, str]:
        return self.accepted.setdefault(url.rstrip("/"), {})


def media_type(path: Path) -> str:
    fmt = EXTENSIONS.get(path.suffix.lower())
    return MEDIA_TYPES[fmt] if fmt is not None else "application/octet-stream"


def default_state_path(url: str) -> Path:
    cache = Path(os.environ.get("TREERAG_CACHE") or Path.home() / ".cache" / "treerag")
    return cache / "uploads" / f"{hashlib.sha256(url.rstrip('/').encode()).hexdigest()[:16]}.json"


@dataclass(frozen=True)
class PendingFile:
    path: Path
    doc_id: str
    size_bytes: int


@dataclass
class UploadReport:
    uploaded: int = 0
    skipped: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)


# A folder upload outlasts a gateway restart: more attempts than a model call gets.
UPLOAD_RETRY = RetryPolicy(max_attempts=6)


def batches(files: list[PendingFile], max_files: int, max_bytes: int) -> Iterator[list[PendingFile]]:
    """Consecutive groups of at most `max_files` files and `max_bytes` (a larger file goes alone)."""
    batch: list[PendingFile] = []
    size = 0
    for file in files:
        if batch and (len(batch) >= max_files or size + file.size_bytes > max_bytes):
            yield batch
            batch, size = [], 0
        batch.append(file)
        size += file.size_bytes
    if batch:
        yield batch


class Uploader:
    def __init__(self, client: httpx.Client, url: str, *, builder: str = "auto", retry: RetryPolicy | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.client = client
        self.url = url.rstrip("/")
        self.builder = builder
        self.retry = retry or UPLOAD_RETRY
        self.sleep = sleep

    def pending(self, paths: list[Path], accepted: dict[str, str], report: UploadReport) -> list[PendingFile]:
        """The files not accepted yet, each content once; unreadable files are reported."""
        found: list[PendingFile] = []
        seen: set[str] = set()
        for path in paths:
            try:
                data = path.read_bytes()
            except OSError as exc:
                report.failed += 1
                report.errors.append(f"error: {path}: cannot read the file ({exc.strerror or exc}); check the path")
                continue
            doc_id = content_id(data)
            if doc_id in accepted or doc_id in seen:
                report.skipped += 1
                continue
            seen.add(doc_id)
            found.append(PendingFile(path, doc_id, len(data)))
        return found

    def send(self, batch: list[PendingFile]) -> httpx.Response:
        """POST the batch, retrying what a retry can fix, after the gateway's Retry-After when it
        gives one. Raises `UploadAbortedError` for 401/403/404."""
        attempt = 0
        while True:
            retry_after: float | None = None
            try:
                files = [("files", (f.path.name, f.path.read_bytes(), media_type(f.path))) for f in batch]
                response = self.client.post(f"{self.url}/v1/documents", files=files, data={"builder": self.builder})
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code in (401, 403):
                    raise UploadAbortedError(f"the gateway refused the request ({response.status_code}); "
                                             "check --key (or TREERAG_API_KEY)")
                if response.status_code == 404:
                    raise UploadAbortedError(f"no upload endpoint at {self.url}/v1/documents; check --url")
                if response.status_code not in RETRYABLE_STATUS:
                    return response
                problem = f"HTTP {response.status_code}"
                retry_after = parse_retry_after(response.headers.get("retry-after"))
            attempt += 1
            if attempt >= self.retry.max_attempts:
                raise UploadGaveUpError(f"the gateway failed {self.retry.max_attempts} times ({problem}); "
                                        "run the same command again later: what was accepted is not sent again")
            delay = self.retry.delay(attempt - 1, retry_after)
            logger.warning("upload retried", extra={"fields": {"problem": problem, "delay_s": round(delay, 2)}})
            self.sleep(delay)

    def record(self, batch: list[PendingFile], response: httpx.Response, accepted: dict[str, str],
               report: UploadReport) -> None:
        """Per-file results into the state and the report."""
        if response.status_code != 202:
            detail = _detail(response)
            for file in batch:
                report.failed += 1
                report.errors.append(f"error: {file.path}: refused ({response.status_code}: {detail})")
            return
        results = response.json().get("files", [])
        if len(results) != len(batch):
            for file in batch:
                report.failed += 1
                report.errors.append(f"error: {file.path}: the gateway answered {len(results)} results for "
                                     f"{len(batch)} files; upgrade the gateway")
            return
        for file, result in zip(batch, results, strict=True):
            document = result.get("document")
            if document is not None:
                # Keyed by the file's own hash: the gateway's id also depends on the key's tenant.
                accepted[file.doc_id] = document["doc_id"]
                report.uploaded += 1
            else:
                report.failed += 1
                report.errors.append(f"error: {file.path}: refused ({result.get('status_code')}: {result.get('error')})")


def _detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except json.JSONDecodeError:
        return response.text[:200]
    detail = body.get("detail") if isinstance(body, dict) else body
    return str(detail)[:300]
