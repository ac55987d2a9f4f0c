"""A flood of guessed API keys against a real gateway on FerretDB: past the address's burst it is
answered 429 before any key look-up, however concurrent, and whatever X-Forwarded-For it sends
(a client cannot pick the address its budget is kept under); a valid key keeps working."""

from __future__ import annotations

import asyncio
import secrets

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.integration.stack import Gateway, Stack, wait_until

pytestmark = pytest.mark.integration

BURST = 20
GUESSES = 600


def key_reads(gateway: Gateway) -> float:
    """Reads of the key store so far: the gateway counts every miss of its key cache as one."""
    text = httpx.get(f"http://127.0.0.1:{gateway.process.metrics_port}/metrics", timeout=10).text
    return sum(sample.value for family in text_string_to_metric_families(text) for sample in family.samples
               if sample.name == "treerag_cache_misses_total" and sample.labels.get("cache") == "api_key")


def answers(gateway: Gateway) -> bool:
    gateway.process.check_alive()
    try:
        return gateway.get("/v1/documents").status_code == 200
    except httpx.HTTPError:
        return False


async def flood(gateway: Gateway, keys: list[str], concurrency: int = 32) -> list[int]:
    queue = list(enumerate(keys))
    statuses: list[int] = []
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30,
                                 limits=httpx.Limits(max_connections=concurrency)) as client:
        async def worker() -> None:
            while queue:
                n, key = queue.pop()
                response = await client.get("/v1/documents", headers={
                    "Authorization": f"Bearer {key}", "X-Forwarded-For": f"198.51.100.{n % 250}"})
                statuses.append(response.status_code)
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return statuses


def test_guessed_keys_get_429_before_any_look_up_and_a_valid_key_still_works(stack: Stack) -> None:
    key = stack.create_key("acme")
    gateway = stack.start_gateway(key, TREERAG_AUTH_FAILURES_PER_S="0.01", TREERAG_AUTH_FAILURE_BURST=str(BURST),
                                  TREERAG_AUTH_CACHE_S="60")
    wait_until(lambda: answers(gateway), 120, "the gateway to answer", interval_s=0.5)
    before = key_reads(gateway)
    guesses = [f"trk_{secrets.token_hex(6)}_{secrets.token_urlsafe(32)}" for _ in range(GUESSES)]

    statuses = asyncio.run(flood(gateway, guesses))

    assert sorted(statuses) == [401] * BURST + [429] * (GUESSES - BURST)
    assert key_reads(gateway) - before <= BURST + 1  # the burst, and the refill while the flood ran
    assert gateway.get("/v1/documents").status_code == 200  # held: no look-up, nothing held back
    refused = gateway.as_key(guesses[0]).get("/v1/documents")
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
