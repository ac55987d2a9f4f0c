"""`treerag upload`: batches, retries on a failing gateway, per-file refusals, and resuming."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from shared.app.retry import RetryPolicy
from shared.model.ids import content_id
from tests.support import pdfs
from treerag.cli import main
from treerag.ingest.upload import Uploader, UploadGaveUpError, UploadReport, UploadState


class FakeGateway:
    """Answers like POST /v1/documents with `files`; fails the first `outages` requests."""

    def __init__(self, outages: int = 0) -> None:
        self.outages = outages
        self.requests = 0
        self.received: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        if self.outages:
            self.outages -= 1
            return httpx.Response(503, json={"detail": "starting"})
        results = []
        for part in _parts(request):
            name, data = part
            if not data.startswith(b"%PDF-"):
                results.append({"file_name": name, "status_code": 415, "error": "not a PDF file"})
                continue
            self.received.append(name)
            doc = {"doc_id": content_id(data), "status": "uploaded", "file_name": name}
            results.append({"file_name": name, "status_code": 202, "document": doc})
        accepted = sum("document" in r for r in results)
        return httpx.Response(202, json={"files": results, "accepted": accepted, "refused": len(results) - accepted})


def _parts(request: httpx.Request) -> list[tuple[str, bytes]]:
    body = request.read()
    boundary = request.headers["content-type"].split("boundary=")[1].encode()
    found = []
    for chunk in body.split(b"--" + boundary):
        if b'name="files"' not in chunk:
            continue
        head, _, data = chunk.partition(b"\r\n\r\n")
        name = head.split(b'filename="')[1].split(b'"')[0].decode()
        found.append((name, data[:-2]))
    return found


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    for n in range(5):
        pdfs.write(root if n % 2 else root / "sub", f"doc{n}.pdf", pdfs.plain_pdf(pages=1 + n))
    pdfs.write(root, "broken.pdf", pdfs.not_a_pdf())
    return root


def _run(monkeypatch: pytest.MonkeyPatch, gateway: FakeGateway, *args: str) -> int:
    def client(headers: dict[str, str], timeout_s: float) -> httpx.Client:
        return httpx.Client(transport=httpx.MockTransport(gateway), headers=headers, timeout=timeout_s)

    monkeypatch.setattr("treerag.commands.upload.open_client", client)
    monkeypatch.setattr("treerag.ingest.upload.time.sleep", lambda s: None)
    return main(["upload", *args])


def test_a_folder_is_sent_in_batches_through_an_outage_and_not_sent_again(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    gateway = FakeGateway(outages=2)
    state = tmp_path / "state.json"
    code = _run(monkeypatch, gateway, str(folder), "--url", "http://gw", "--state", str(state), "--batch-files", "2")
    out, err = capsys.readouterr()
    assert code == 1  # the broken file
    assert "6 files: 5 uploaded, 0 skipped (accepted before), 1 failed" in out
    assert "broken.pdf" in err and "415" in err
    assert sorted(gateway.received) == [f"doc{n}.pdf" for n in range(5)]
    assert gateway.requests == 2 + 3  # two refused by the outage, then three batches of two

    (folder / "broken.pdf").unlink()
    pdfs.write(folder, "new.pdf", pdfs.plain_pdf(pages=9))
    pdfs.write(folder, "renamed-copy.pdf", (folder / "doc1.pdf").read_bytes())
    gateway.received.clear()
    assert _run(monkeypatch, gateway, str(folder), "--url", "http://gw", "--state", str(state)) == 0
    out, _ = capsys.readouterr()
    assert gateway.received == ["new.pdf"]
    assert "7 files: 1 uploaded, 6 skipped (accepted before), 0 failed" in out


def test_an_interrupted_upload_resumes_where_it_stopped(folder: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    (folder / "broken.pdf").unlink()
    state = tmp_path / "state.json"
    down = FakeGateway(outages=10**6)
    with httpx.Client(transport=httpx.MockTransport(FakeGateway())) as good:
        files = sorted(folder.rglob("*.pdf"))
        uploader = Uploader(good, "http://gw")
        report = UploadReport()
        first = uploader.pending(files[:2], {}, report)
        accepted: dict[str, str] = {}
        uploader.record(first, uploader.send(first), accepted, report)
    saved = UploadState()
    saved.for_url("http://gw").update(accepted)
    saved.save(state)

    assert _run(monkeypatch, down, str(folder), "--url", "http://gw/", "--state", str(state), "--retries", "3") == 1
    assert down.requests == 3  # gave up after three attempts on the first batch left

    gateway = FakeGateway()
    assert _run(monkeypatch, gateway, str(folder), "--url", "http://gw", "--state", str(state)) == 0
    assert sorted(gateway.received) == sorted(f.name for f in files[2:])


def test_retries_give_up_with_what_to_do() -> None:
    with httpx.Client(transport=httpx.MockTransport(FakeGateway(outages=5))) as client:
        uploader = Uploader(client, "http://gw", retry=RetryPolicy(max_attempts=2), sleep=lambda s: None)
        with pytest.raises(UploadGaveUpError, match="run the same command again"):
            uploader.send([])


class BusyGateway:
    """429 with a Retry-After, then an empty batch accepted."""

    def __init__(self, retry_after: str) -> None:
        self.retry_after = retry_after
        self.busy = 1

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if self.busy:
            self.busy -= 1
            return httpx.Response(429, headers={"Retry-After": self.retry_after}, json={"detail": "slow down"})
        return httpx.Response(202, json={"files": [], "accepted": 0, "refused": 0})


@pytest.mark.parametrize(("header", "waited"), [("7", 7.0), ("120", 30.0)])
def test_the_upload_waits_as_long_as_the_gateway_asks_up_to_the_cap(header: str, waited: float) -> None:
    slept: list[float] = []
    with httpx.Client(transport=httpx.MockTransport(BusyGateway(header))) as client:
        uploader = Uploader(client, "http://gw", retry=RetryPolicy(max_attempts=3, max_delay_s=30.0), sleep=slept.append)
        assert uploader.send([]).status_code == 202
    assert slept == [waited]


def test_retry_after_is_read_in_seconds_or_as_an_http_date() -> None:
    from datetime import UTC, datetime

    from shared.app.retry import parse_retry_after

    now = datetime(2030, 1, 5, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("5") == 5.0
    assert parse_retry_after("Sat, 05 Jan 2030 12:00:09 GMT", now=now) == 9.0
    assert parse_retry_after("Sat, 05 Jan 2030 11:00:00 GMT", now=now) == 0.0  # already past
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
