"""`treerag upload DIR|FILE ... --url URL`: send documents to a gateway, with progress, retries
and resumption (what the gateway accepted is not sent again)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import httpx
from tqdm import tqdm

from shared.app.retry import RetryPolicy
from treerag.ingest.files import INDEXABLE_SUFFIXES, expand_paths
from treerag.ingest.upload import (
    UploadAbortedError,
    Uploader,
    UploadGaveUpError,
    UploadReport,
    UploadState,
    batches,
    default_state_path,
)

BATCH_BYTES = 32 * 1024 * 1024


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("upload", help="Send documents (folders recursively) to a gateway.")
    parser.add_argument("paths", nargs="+", type=Path, metavar="FILE|DIR")
    parser.add_argument("--url", required=True, help="The gateway, e.g. http://127.0.0.1:8000")
    parser.add_argument("--key", default=os.environ.get("TREERAG_API_KEY"),
                        help="API key, sent as a bearer token (default: TREERAG_API_KEY).")
    parser.add_argument("--builder", choices=["auto", "outline", "layout", "windows", "llm"], default="auto")
    parser.add_argument("--batch-files", type=int, default=8, help="Files per request (default 8).")
    parser.add_argument("--retries", type=int, default=6, help="Attempts per request before giving up (default 6).")
    parser.add_argument("--timeout", type=float, default=120.0, help="Seconds per request (default 120).")
    parser.add_argument("--state", type=Path, default=None,
                        help="Where what was accepted is kept (default: a file per URL under ~/.cache/treerag/uploads).")
    parser.add_argument("--no-progress", action="store_true", help="No progress bar.")
    parser.set_defaults(func=run)


def open_client(headers: dict[str, str], timeout_s: float) -> httpx.Client:
    return httpx.Client(headers=headers, timeout=timeout_s)


def run(args: argparse.Namespace) -> int:
    if args.batch_files < 1 or args.retries < 1:
        print("error: --batch-files and --retries must be at least 1", file=sys.stderr)
        return 2
    paths = expand_paths(args.paths)
    if not paths:
        print(f"error: no {'/'.join(INDEXABLE_SUFFIXES)} file in {', '.join(map(str, args.paths))}", file=sys.stderr)
        return 1
    state_path = args.state or default_state_path(args.url)
    try:
        state = UploadState.load(state_path)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    accepted = state.for_url(args.url)
    headers = {"Authorization": f"Bearer {args.key}"} if args.key else {}
    report = UploadReport()
    with open_client(headers, args.timeout) as client:
        uploader = Uploader(client, args.url, builder=args.builder, retry=RetryPolicy(max_attempts=args.retries))
        pending = uploader.pending(paths, accepted, report)
        quiet = args.no_progress or not sys.stderr.isatty()
        bar = tqdm(total=sum(f.size_bytes for f in pending), unit="B", unit_scale=True, desc="upload",
                   file=sys.stderr, disable=quiet)
        try:
            for batch in batches(pending, args.batch_files, BATCH_BYTES):
                uploader.record(batch, uploader.send(batch), accepted, report)
                state.save(state_path)
                bar.update(sum(f.size_bytes for f in batch))
        except (UploadAbortedError, UploadGaveUpError) as exc:
            bar.close()
            for line in report.errors:
                print(line, file=sys.stderr)
            print(f"error: {exc}", file=sys.stderr)
            print(_summary(len(paths), report) + f"; state: {state_path}")
            return 1
        bar.close()
    for line in report.errors:
        print(line, file=sys.stderr)
    print(_summary(len(paths), report))
    return 1 if report.failed else 0


def _summary(files: int, report: UploadReport) -> str:
    return (f"{files} files: {report.uploaded} uploaded, {report.skipped} skipped (accepted before), "
            f"{report.failed} failed")
