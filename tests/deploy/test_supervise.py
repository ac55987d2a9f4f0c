"""`make up` runs each service under scripts/supervise.py: a service that exits or is killed is
started again with backoff, each restart logged; stopping the supervisor stops the service."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.support.polling import until

SUPERVISE = Path(__file__).resolve().parents[2] / "scripts" / "supervise.py"


def supervise(tmp_path: Path, *child: str, backoff: str = "0.05") -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(SUPERVISE), "svc-0", "--backoff", backoff, "--max-backoff", "0.2",
                             "--", sys.executable, "-c", *child], stderr=subprocess.PIPE, text=True, cwd=tmp_path)




def test_a_service_that_exits_is_started_again_and_each_restart_is_logged(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    supervisor = supervise(tmp_path, f"open({str(runs)!r}, 'a').write('x'); raise SystemExit(3)")
    try:
        assert until(lambda: runs.exists() and len(runs.read_text()) >= 3, 10.0), "the service was not restarted"
    finally:
        supervisor.send_signal(signal.SIGTERM)
        _, logs = supervisor.communicate(timeout=10)
    assert supervisor.returncode == 0
    exits = [json.loads(line) for line in logs.splitlines() if '"service exited; restarting"' in line]
    assert len(exits) >= 2 and exits[0]["exit_code"] == 3 and exits[0]["service"] == "svc-0"
    assert exits[1]["restart_in_s"] > exits[0]["restart_in_s"]  # the backoff grows


def test_a_killed_service_comes_back_with_a_new_process(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    supervisor = supervise(tmp_path, f"import os, time; open({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n'); "
                                     "time.sleep(60)")
    try:
        assert until(lambda: pids.exists() and len(pids.read_text().split()) == 1, 10.0)
        first = int(pids.read_text().split()[0])
        os.kill(first, signal.SIGKILL)
        assert until(lambda: len(pids.read_text().split()) == 2, 10.0), "the killed service was not restarted"
        second = int(pids.read_text().split()[1])
        assert second != first
    finally:
        supervisor.send_signal(signal.SIGTERM)
        supervisor.communicate(timeout=10)
    assert supervisor.returncode == 0
    assert until(lambda: not Path(f"/proc/{second}").exists(), 10.0), "stopping the supervisor left the service running"
