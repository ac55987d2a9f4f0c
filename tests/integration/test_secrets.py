"""A password in the MongoDB URL stays secret: with the store unreachable, the stage that gives
up, the gateway that answers 503 and the key command that fails all say where they looked and
why, with the password masked, in every log line and every response; and so do a gateway and a
stage that were serving when the store went away under them."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from urllib.parse import urlsplit

import pytest

from tests.support.integration.stack import REPO, ServiceProcess, Stack, free_port, wait_until

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


class StoreLink:
    """A TCP relay in front of the test's FerretDB, so that the store can fail under a running
    stack: `cut()` stops listening and drops every connection."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # cut
            server = socket.create_connection(self.upstream)
            with self.lock:
                self.sockets += [client, server]
            for source, target in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, target):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self) -> None:
        self.listener.close()
        with self.lock:
            for end in self.sockets:
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                end.close()


def test_a_store_lost_while_serving_does_not_reveal_the_password(stack: Stack, query_stages: list[ServiceProcess]) -> None:
    store = urlsplit(stack.mongo_url)
    link = StoreLink((store.hostname or "127.0.0.1", store.port or 27017))
    # FerretDB takes any user and password over PLAIN: the URL carries one, as a production one does.
    url = f"mongodb://treerag:{PASSWORD}@127.0.0.1:{link.port}/?authMechanism=PLAIN"
    gateway = stack.start_gateway(stack.create_key("default", admin=True), TREERAG_MONGO_URL=url)
    navigator = stack.start_stage("navigator", TREERAG_MONGO_URL=url)
    responses = []
    try:
        wait_until(gateway.ready, 240, "the gateway to serve through the relay", interval_s=0.5)
        stack.wait_consuming(navigator)
        assert gateway.get("/v1/documents").status_code == 200
        link.cut()
        wait_until(lambda: gateway.get("/readyz", timeout=60).status_code == 503, 120, "/readyz to report the store")
        for path in ("/readyz", "/v1/documents"):
            responses.append(gateway.get(path, timeout=60))
        responses.append(gateway.post("/v1/query", json={"question": "At what pressure does the valve open?"},
                                      timeout=60))
    finally:
        link.cut()
        stack.stop(gateway.process)
        stack.stop(navigator)
    assert [r.status_code for r in responses] == [503, 503, 503], [r.text for r in responses]
    for text in (gateway.process.log_text(), navigator.log_text(), *(r.text for r in responses)):
        assert PASSWORD not in text
