"""SIGKILL the test process mid-test: its retsu must be gone within 2 s."""

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

ORPHAN_DIR = Path(__file__).resolve().parent.parent / "orphan"


def retsu_pids_with(marker):
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv and os.path.basename(argv[0]) == b"retsu" and any(marker.encode() in a for a in argv):
            pids.append(int(entry))
    return pids


def test_sigkilled_test_process_leaves_no_server(tmp_path):
    data_dir = tmp_path / f"orphan-{uuid.uuid4().hex}"
    victim = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-s", "-q", "-o", f"retsu_args=--data-dir={data_dir}",
         str(ORPHAN_DIR / "victim_test.py")],
        cwd=ORPHAN_DIR, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        seen = []
        deadline = time.monotonic() + 60
        for line in victim.stdout:
            seen.append(line)
            if line.startswith("VICTIM READY"):
                break
            assert time.monotonic() < deadline, "".join(seen)
        else:
            raise AssertionError("the inner pytest ended before its test ran:\n" + "".join(seen))
        server_pid = int(line.split()[2])
        assert retsu_pids_with(str(data_dir)) == [server_pid], "the inner run's server is not running"

        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(10)
        killed_at = time.monotonic()
        while retsu_pids_with(str(data_dir)) and time.monotonic() - killed_at < 2:
            time.sleep(0.05)  # polling for the process to go, not timing the test
        assert retsu_pids_with(str(data_dir)) == [], "retsu outlived its SIGKILLed test process by 2 s"
    finally:
        if victim.poll() is None:
            victim.kill()
            victim.wait()
        for pid in retsu_pids_with(str(data_dir)):
            os.kill(pid, signal.SIGKILL)
