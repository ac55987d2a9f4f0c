"""A body far over the upload limit, streamed to the running gateway: refused once the limit is
passed, and the gateway's memory does not grow with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.settings import Settings
from tests.support.gateway.streams import send_chunked_upload
from tests.support.integration.stack import Gateway

pytestmark = pytest.mark.integration

MIB = 1024 * 1024


def resident_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for pid {pid}")


def test_a_gigabyte_upload_is_refused_at_the_request_limit_with_flat_memory(gateway: Gateway) -> None:
    limit = Settings().max_request_bytes  # the default the session gateway runs with
    before = resident_bytes(gateway.process.pid)
    sent, response = send_chunked_upload(gateway.port, 1024 * MIB, chunk_bytes=MIB)
    grown = resident_bytes(gateway.process.pid) - before
    assert response.startswith(b"HTTP/1.1 413"), response[:200]
    assert sent < limit + 64 * MIB, f"{sent / MIB:.0f} MiB were read before the 413"
    assert grown < 32 * MIB, f"the gateway grew by {grown / MIB:.0f} MiB"
