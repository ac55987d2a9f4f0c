"""A password in the MongoDB URL stays secret: with the store unreachable, the stage that gives
up, the gateway that answers 503 and the key command that fails all say where they looked and
why, with the password masked, in every log line and every response."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from .stack import REPO, Stack, free_port, wait_until

pytestmark = pytest.mark.integration

PASSWORD = "Sw0rdfish-41x"


def test_a_password_in_the_mongodb_url_is_in_no_log_line_and_no_response(stack: Stack) -> None:
    url = f"mongodb://treerag:{PASSWORD}@127.0.0.1:{free_port()}/"  # nothing listens there
    navigator = stack.start_stage("navigator", TREERAG_MONGO_URL=url)
    gateway = stack.start_gateway(TREERAG_MONGO_URL=url)
    responses = []
    try:
        wait_until(lambda: not navigator.alive, 90, "the navigator to give up on the unreachable store")
        # On a loaded machine the gateway may still be starting: it either listens or gives up.
        wait_until(lambda: _listening(gateway.port) or not gateway.process.alive, 120,
                   "the gateway to listen or give up")
        if gateway.process.alive:
            for path in ("/readyz", "/v1/documents"):
                responses.append(gateway.get(path, timeout=60))
        keys = subprocess.run([sys.executable, "-m", "treerag", "keys", "--mongo-url", url, "list"], cwd=REPO,
                              env=stack.env(), capture_output=True, text=True, timeout=120)
    finally:
        stack.stop(gateway.process)
    said = navigator.log_text()
    assert "is not reachable" in said and "treerag:***@127.0.0.1" in said  # where it looked, masked
    assert keys.returncode != 0 and "treerag:***@" in keys.stderr
    for response in responses:
        assert response.status_code in (401, 503), response.text
    for text in (said, gateway.process.log_text(), keys.stdout, keys.stderr, *(r.text for r in responses)):
        assert PASSWORD not in text


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True
