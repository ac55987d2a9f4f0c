"""Keep one service process running: `python scripts/supervise.py NAME -- COMMAND...`.

`make up` starts every stage and the gateway under it, as compose (`restart: unless-stopped`)
and Kubernetes (the pods' restart policy) do for theirs. When the command exits, for any reason
(a crash, an out-of-memory kill, kill -9), it is started again after a backoff that doubles
from `--backoff` up to `--max-backoff` seconds and starts over once a run has lasted
`--healthy-after` seconds. Each exit and restart is one JSON log line. SIGTERM or SIGINT is
passed to the command, and the supervisor ends when the command has.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shared.adapters.logs import configure_logging, log_fields  # noqa: E402 - after the path is set

logger = logging.getLogger("treerag.supervise")


class Supervisor:
    def __init__(self, name: str, command: Sequence[str], backoff_s: float, max_backoff_s: float,
                 healthy_after_s: float) -> None:
        self.name = name
        self.command = list(command)
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.healthy_after_s = healthy_after_s
        self.stopping = threading.Event()
        self.child: subprocess.Popen[bytes] | None = None

    def stop(self, signum: int, _frame: object = None) -> None:
        self.stopping.set()
        child = self.child
        if child is not None and child.poll() is None:
            child.send_signal(signum)

    def run(self) -> int:
        delay = self.backoff_s
        restarts = 0
        while True:
            started = time.monotonic()
            self.child = subprocess.Popen(self.command)
            logger.info("service started", extra=log_fields(service=self.name, pid=self.child.pid, restarts=restarts))
            code = self.child.wait()
            if self.stopping.is_set():
                logger.info("service stopped", extra=log_fields(service=self.name, exit_code=code))
                return 0
            lasted = time.monotonic() - started
            if lasted >= self.healthy_after_s:
                delay = self.backoff_s  # it ran well: a new failure starts the backoff over
            logger.warning("service exited; restarting", extra=log_fields(
                service=self.name, exit_code=code, ran_s=round(lasted, 1), restart_in_s=delay))
            if self.stopping.wait(delay):
                return 0
            delay = min(delay * 2, self.max_backoff_s)
            restarts += 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], usage="%(prog)s NAME [options] -- COMMAND...")
    parser.add_argument("name", help="The service's name in the logs (e.g. navigator-0).")
    parser.add_argument("--backoff", type=float, default=1.0, help="Seconds before the first restart.")
    parser.add_argument("--max-backoff", type=float, default=30.0, help="The longest wait between restarts.")
    parser.add_argument("--healthy-after", type=float, default=60.0,
                        help="A run this long resets the backoff.")
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        parser.error("give the command to run after --")
    cut = argv.index("--")
    args, command = parser.parse_args(argv[:cut]), argv[cut + 1:]
    configure_logging("INFO")
    os.setpgrp()  # its own process group, so stopping it by force takes the service along
    supervisor = Supervisor(args.name, command, args.backoff, args.max_backoff, args.healthy_after)
    signal.signal(signal.SIGTERM, supervisor.stop)
    signal.signal(signal.SIGINT, supervisor.stop)
    return supervisor.run()


if __name__ == "__main__":
    raise SystemExit(main())
