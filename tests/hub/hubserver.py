"""A throwaway JupyterHub for the class test, and a student who uses it through its API.

The Hub is the real one from PyPI with its real proxy (configurable-http-proxy, from npm,
installed in .hub-proxy/ by scripts/install-hub-proxy.sh). Users log in through
JupyterHub's DummyAuthenticator (any name, one shared password) and each gets a
single-user Jupyter server started by the SimpleLocalProcessSpawner: a local process of
this virtual environment, as JupyterHub's own examples run it. Everything listens on
127.0.0.1 only, and every file (database, cookie secret, users' homes) is in a
temporary folder.

Every wait is bounded: a Hub that does not answer, a server that does not start, or a
cell that does not finish fails the test with what it was waiting for.
"""
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import requests
import websocket

REPO = Path(__file__).resolve().parents[2]
PROXY = REPO / ".hub-proxy" / "node_modules" / ".bin" / "configurable-http-proxy"
VENV_BIN = Path(sys.executable).parent
PASSWORD = "class-test"


def free_port():
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, condition, timeout, interval=0.2):
    """Call ``condition`` until it returns something true; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up after {timeout} s waiting for {what}")
        time.sleep(interval)


class Hub:
    """``jupyterhub`` in a process group of its own, configured for the test."""

    def __init__(self, workdir, start_timeout=120):
        self.workdir = Path(workdir)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = secrets.token_hex(16)    # the test's own service, an admin
        self.start_timeout = start_timeout
        self.process = None

    def config(self):
        """The Hub's configuration: loopback only, dummy logins, local-process servers."""
        homes = self.workdir / "homes"
        homes.mkdir(parents=True, exist_ok=True)
        server_args = ["--allow-root"] if os.geteuid() == 0 else []
        return f"""
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {self.port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {free_port()}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{free_port()}"
c.ConfigurableHTTPProxy.command = [{str(PROXY)!r}]
c.JupyterHub.db_url = "sqlite:///{self.workdir / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = {str(self.workdir / 'cookie_secret')!r}
c.JupyterHub.pid_file = {str(self.workdir / 'jupyterhub.pid')!r}
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {PASSWORD!r}
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = {str(homes / '{username}')!r}
c.Spawner.cmd = [{str(VENV_BIN / 'jupyterhub-singleuser')!r}]
c.Spawner.args = {server_args!r}
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = {self.start_timeout}
c.Spawner.http_timeout = {self.start_timeout}
c.JupyterHub.concurrent_spawn_limit = 0
c.JupyterHub.services = [{{"name": "class-test", "api_token": {self.token!r}}}]
c.JupyterHub.load_roles = [{{
    "name": "class-test-admin",
    "scopes": ["admin:users", "admin:servers", "tokens", "access:servers", "list:users"],
    "services": ["class-test"],
}}]
"""

    def start(self):
        config = self.workdir / "jupyterhub_config.py"
        config.write_text(self.config())
        env = dict(os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
        self.log = open(self.workdir / "jupyterhub.log", "w")
        self.process = subprocess.Popen(
            [str(VENV_BIN / "jupyterhub"), "-f", str(config)], cwd=self.workdir, env=env,
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_for("the Hub's API", self._answers, self.start_timeout)
        return self

    def _answers(self):
        if self.process.poll() is not None:
            raise RuntimeError(f"JupyterHub exited ({self.process.returncode}); its log:\n"
                               + self.log_text())
        try:
            return requests.get(f"{self.url}/hub/api/", timeout=2).ok
        except requests.RequestException:
            return False

    def log_text(self):
        return (self.workdir / "jupyterhub.log").read_text(errors="replace")[-4000:]

    def api(self, method, path, token=None, **kwargs):
        """Call the Hub's REST API (as the test's admin service unless ``token`` is given)."""
        headers = {"Authorization": f"token {token or self.token}"}
        response = requests.request(method, f"{self.url}/hub/api{path}", headers=headers,
                                    timeout=30, **kwargs)
        if not response.ok:
            raise RuntimeError(f"{method} {path}: HTTP {response.status_code} {response.text}")
        return response.json() if response.text else None

    def stop(self):
        """Stop the Hub, its proxy and every server it started; bounded."""
        if self.process is None:
            return
        group = psutil.Process(self.process.pid)
        children = group.children(recursive=True)
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        _, alive = psutil.wait_procs(children, timeout=15)
        for process in alive:
            process.kill()
        self.log.close()


class Student:
    """One user of the Hub: logs in, starts a server, runs a notebook on a kernel."""

    def __init__(self, hub, name):
        self.hub = hub
        self.name = name
        self.token = None
        self.memory_after_lesson = None

    def log_in(self):
        """Log in through the Hub's login form, as a browser does (DummyAuthenticator)."""
        session = requests.Session()
        page = session.get(f"{self.hub.url}/hub/login", timeout=30)
        page.raise_for_status()
        xsrf = session.cookies.get("_xsrf", "")
        answer = session.post(f"{self.hub.url}/hub/login?next=", timeout=30, data={
            "username": self.name, "password": PASSWORD, "_xsrf": xsrf})
        if not any(c.name.startswith("jupyterhub-hub-login") for c in session.cookies):
            raise RuntimeError(f"{self.name} could not log in: HTTP {answer.status_code}")
        self.token = self.hub.api("POST", f"/users/{self.name}/tokens",
                                  json={"note": "class test", "expires_in": 3600})["token"]
        return self

    def start_server(self, timeout):
        """Ask the Hub for this user's server, as the user, and wait until it is ready."""
        self.hub.api("POST", f"/users/{self.name}/server", token=self.token)
        wait_for(f"{self.name}'s server", self._server_ready, timeout, interval=0.5)

    def _server_ready(self):
        user = self.hub.api("GET", f"/users/{self.name}", token=self.token)
        server = user.get("servers", {}).get("")
        return bool(server and server.get("ready"))

    @property
    def server_url(self):
        return f"{self.hub.url}/user/{self.name}"

    def run_notebook(self, notebook, cell_timeout):
        """Start a kernel on this user's server and run ``notebook``'s code cells on it, in
        order, through the server's websocket API. Returns one list of outputs per code
        cell (nbformat's output dicts), as a notebook would store them."""
        headers = {"Authorization": f"token {self.token}"}
        kernel = requests.post(f"{self.server_url}/api/kernels", headers=headers, timeout=60,
                               json={"name": "python3"})
        kernel.raise_for_status()
        kernel_id = kernel.json()["id"]
        ws_url = self.server_url.replace("http://", "ws://") + \
            f"/api/kernels/{kernel_id}/channels"
        channel = websocket.create_connection(ws_url, header=headers, timeout=cell_timeout)
        try:
            session = uuid.uuid4().hex
            outputs = [self._execute(channel, session, "".join(cell["source"]), cell_timeout)
                       for cell in notebook["cells"] if cell["cell_type"] == "code"]
            self.memory_after_lesson = self.server_memory()   # the kernel still holds it all
            return outputs
        finally:
            channel.close()
            requests.delete(f"{self.server_url}/api/kernels/{kernel_id}", headers=headers,
                            timeout=30)

    def _execute(self, channel, session, code, timeout):
        msg_id = uuid.uuid4().hex
        channel.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": self.name,
                       "session": session, "date": "", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True,
                        "user_expressions": {}, "allow_stdin": False,
                        "stop_on_error": True}}))
        outputs, deadline = [], time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = json.loads(channel.recv())
            if message.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "status" and content["execution_state"] == "idle":
                return outputs
            if kind == "stream":
                outputs.append({"output_type": "stream", "name": content["name"],
                                "text": content["text"]})
            elif kind in ("execute_result", "display_data"):
                outputs.append({"output_type": kind, "data": content["data"]})
            elif kind == "error":
                outputs.append({"output_type": "error", "ename": content["ename"],
                                "evalue": content["evalue"]})
        raise TimeoutError(f"{self.name}: a cell did not finish within {timeout} s:\n{code}")

    def server_memory(self):
        """Resident memory (bytes) of this user's server and its kernels."""
        total = 0
        for process in psutil.process_iter(["cmdline"]):
            cmdline = " ".join(process.info["cmdline"] or ())
            if "jupyterhub-singleuser" not in cmdline:
                continue
            try:
                if process.environ().get("JUPYTERHUB_USER") != self.name:
                    continue
                for member in [process] + process.children(recursive=True):
                    total += member.memory_info().rss
            except psutil.Error:
                continue
        return total
