"""`make lab` serves the course: scripts/lab.sh, started the way the Makefile starts it.

It prints the URL to open before JupyterLab starts, and that URL serves JupyterLab. As
root (a container, a fresh cloud machine) the script passes --allow-root, and only then.
"""
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
VENV = pathlib.Path(sys.executable).parent.parent


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _lab_command(pid):
    return pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_make_lab_prints_its_url_and_serves_it():
    env = dict(os.environ, PORT=str(_free_port()), VENV=str(VENV))
    env.pop("JUPYTER_TOKEN", None)
    lab = subprocess.Popen(["bash", "scripts/lab.sh"], cwd=ROOT, env=env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           start_new_session=True)
    try:
        url = None
        for line in lab.stdout:         # the URL comes before JupyterLab's own log
            found = re.search(r"http://127\.0\.0\.1:\d+/lab\?token=[0-9a-f]+", line)
            if found:
                url = found.group(0)
                break
        assert url, "scripts/lab.sh printed no URL"
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5) as page:
                    assert page.status == 200 and b"JupyterLab" in page.read()
                    break
            except OSError:
                assert lab.poll() is None, "JupyterLab stopped: " + lab.stdout.read()
                assert time.monotonic() < deadline, "JupyterLab did not answer in 90 s"
                time.sleep(0.5)
        root = os.geteuid() == 0
        assert (b"--allow-root" in _lab_command(lab.pid)) == root
    finally:
        os.killpg(lab.pid, signal.SIGTERM)
        try:
            lab.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(lab.pid, signal.SIGKILL)
            lab.wait()
