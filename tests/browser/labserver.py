"""A throwaway JupyterLab server and a few helpers to drive it from Playwright.

The server runs from this virtual environment on a free localhost port, with
no token, and with every Jupyter directory (config, data, runtime, settings,
workspaces) inside a temporary folder, so it neither reads nor changes the
user's own set-up. Its root is a temporary folder too: tests copy the
notebooks they open into it, and the repository's notebooks stay untouched.

Everything waits on conditions (a line in the server's log, an HTTP answer,
a DOM state in the browser), never on fixed sleeps.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Debian's Chromium (scripts/install-chromium.sh installs it); Playwright never
# downloads a browser of its own here.
CHROMIUM = os.environ.get("TEACHGRAD_CHROMIUM", "/usr/bin/chromium")

# The machine's network is closed: keep Chromium from calling home.
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]

# JupyterLab's own settings for the test: no announcements ("would you like to
# receive news?") toast over the notebook, and every cell kept in the DOM.
PAGE_CONFIG = {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}
USER_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false", "checkForUpdates": False},
}


def free_port():
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class JupyterLabServer:
    """``jupyter lab`` in a process group of its own, stopped by ``stop()``."""

    def __init__(self, home, root_dir):
        self.home = Path(home)            # the server's private Jupyter directories
        self.root_dir = Path(root_dir)    # what the file browser shows
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = self.home / "jupyterlab.log"
        self.process = None
        self._ready = threading.Event()
        self._log_thread = None

    # -- start and stop ---------------------------------------------------------

    def _environment(self):
        dirs = {name: self.home / name for name in
                ("config", "data", "runtime", "settings", "workspaces", "ipython")}
        for d in dirs.values():
            d.mkdir(parents=True, exist_ok=True)
        (dirs["config"] / "labconfig").mkdir(exist_ok=True)
        (dirs["config"] / "labconfig" / "page_config.json").write_text(json.dumps(PAGE_CONFIG))
        for name, settings in USER_SETTINGS.items():
            path = dirs["settings"] / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(settings))
        env = dict(os.environ)
        env.update({
            "JUPYTER_CONFIG_DIR": str(dirs["config"]),
            "JUPYTER_DATA_DIR": str(dirs["data"]),
            "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
            "JUPYTERLAB_SETTINGS_DIR": str(dirs["settings"]),
            "JUPYTERLAB_WORKSPACES_DIR": str(dirs["workspaces"]),
            "IPYTHONDIR": str(dirs["ipython"]),
            "JUPYTER_PLATFORM_DIRS": "1",
            "PYTHONUNBUFFERED": "1",
        })
        # The kernel runs this interpreter (the kernelspec says "python", which
        # jupyter_client maps to sys.executable), so it imports this checkout's teachgrad.
        return env, dirs

    def start(self, timeout=90):
        env, dirs = self._environment()
        command = [
            sys.executable, "-m", "jupyterlab",
            "--no-browser", "--allow-root",             # CI runs as root
            "--ip=127.0.0.1", f"--port={self.port}", "--ServerApp.port_retries=0",
            "--IdentityProvider.token=", "--ServerApp.password=",
            f"--ServerApp.root_dir={self.root_dir}",
            f"--LabApp.user_settings_dir={dirs['settings']}",
            f"--LabApp.workspaces_dir={dirs['workspaces']}",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.expose_app_in_browser=True",      # window.jupyterapp for the test
            "--ServerApp.terminals_enabled=False",
        ]
        self.process = subprocess.Popen(
            command, cwd=self.root_dir, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True)                     # its own process group
        self._log_thread = threading.Thread(target=self._copy_log, daemon=True)
        self._log_thread.start()
        # The server prints "... is running at:" and then its URL once it
        # listens; the log thread sets _ready then, or when the process dies.
        deadline = time.monotonic() + timeout
        try:
            if not self._ready.wait(timeout):
                raise RuntimeError(f"JupyterLab printed no URL within {timeout} s")
            # The URL can come a moment before the socket accepts: ask until it answers.
            while True:
                if self.process.poll() is not None:
                    raise RuntimeError(f"JupyterLab exited with code {self.process.returncode}")
                try:
                    if "started" in self.get_json("/api/status"):
                        return self
                except (OSError, urllib.error.URLError, ValueError):
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"JupyterLab did not answer within {timeout} s")
                    try:
                        self.process.wait(0.1)   # wakes at once if the server dies
                    except subprocess.TimeoutExpired:
                        pass
        except BaseException as error:
            self.stop()
            raise RuntimeError(f"{error}; its log ends:\n{self.log_tail()}") from error

    def _copy_log(self):
        with open(self.log_path, "w") as log:
            for line in self.process.stdout:
                log.write(line)
                log.flush()
                if f"http://127.0.0.1:{self.port}/lab" in line:
                    self._ready.set()
        self._ready.set()      # the process has exited: wake whoever waits

    def log_tail(self, lines=60):
        try:
            return "".join(self.log_path.read_text().splitlines(True)[-lines:])
        except OSError:
            return "(no log)"

    def _kernel_pids(self):
        """The processes the server started (its kernels), from /proc."""
        pids = set()
        try:
            for task in Path(f"/proc/{self.process.pid}/task").iterdir():
                pids.update(int(p) for p in (task / "children").read_text().split())
        except OSError:
            pass
        return pids

    def stop(self, timeout=20):
        """Shut the server and its kernels down; kill whatever is left."""
        if self.process is None or self.process.poll() is not None:
            return
        children = self._kernel_pids()
        # SIGTERM: the server shuts its kernels down, then exits.
        self._signal_group(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self._signal_group(signal.SIGKILL)
            self.process.wait()
        for pid in children:   # kernels run in sessions of their own
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self._log_thread is not None:
            self._log_thread.join(5)

    def _signal_group(self, signum):
        try:
            os.killpg(self.process.pid, signum)
        except ProcessLookupError:
            pass

    # -- HTTP -------------------------------------------------------------------

    def request(self, path, method="GET", data=None):
        req = urllib.request.Request(self.base_url + path, method=method, data=data)
        with urllib.request.urlopen(req, timeout=10) as response:
            return response.read()

    def get_json(self, path):
        return json.loads(self.request(path))

    def running_kernels(self):
        return self.get_json("/api/kernels")


def copy_notebook(server, source, name=None):
    """Copy the notebook ``source`` into the server's root; return its name there."""
    name = name or Path(source).name
    shutil.copy(source, server.root_dir / name)
    return name


# -- In the browser ---------------------------------------------------------------

def open_notebook(page, server, name, timeout_ms=60_000):
    """Open ``name`` (relative to the server's root) and wait for its kernel."""
    page.goto(f"{server.base_url}/lab/tree/{name}", wait_until="domcontentloaded")
    page.wait_for_function(
        """name => {
            const app = window.jupyterapp;
            const w = app && app.shell.currentWidget;
            return !!(w && w.context && w.context.path === name && w.sessionContext
                      && w.sessionContext.session && w.sessionContext.session.kernel
                      && w.sessionContext.session.kernel.connectionStatus === 'connected'
                      && w.content.widgets.length > 0);
        }""", arg=name, timeout=timeout_ms, polling=100)


def run_all_cells(page, timeout_ms=120_000):
    """Clear the saved outputs (so nothing stale can pass for a result), Run >
    Run All Cells, then wait until every code cell has run and the kernel is
    idle again. Returns the outputs of type "error", if any."""
    page.evaluate("""async () => {
        await window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs');
        const nb = window.jupyterapp.shell.currentWidget;
        if (nb.content.widgets.some(c => c.model.type === 'code' && c.model.outputs.length))
            throw new Error('the outputs were not cleared');
        // resolves when the cells have run; the wait below checks that too
        window.jupyterapp.commands.execute('notebook:run-all-cells');
    }""")
    page.wait_for_function(
        """() => {
            const nb = window.jupyterapp.shell.currentWidget;
            const kernel = nb.sessionContext.session.kernel;
            const cells = nb.content.widgets.filter(c => c.model.type === 'code');
            return kernel.status === 'idle' && cells.every(c =>
                c.model.executionCount !== null && c.promptNode.textContent.indexOf('*') < 0);
        }""", timeout=timeout_ms, polling=100)
    return page.evaluate(
        """() => window.jupyterapp.shell.currentWidget.content.widgets
               .filter(c => c.model.type === 'code')
               .flatMap(c => c.model.outputs.toJSON())
               .filter(o => o.output_type === 'error')
               .map(o => o.ename + ': ' + o.evalue)""")


def go_to_step(page, widgets, i, step):
    """Show step ``step`` of the ``i``-th stepper widget matching ``widgets`` (a CSS
    selector) through its step box, jslinked to its frames: no kernel round trip."""
    box = page.locator(widgets).nth(i).locator(".tg-controls .widget-text input")
    box.fill(str(step))
    box.press("Enter")
    page.wait_for_function(
        """([sel, i, step]) => {
            const f = document.querySelectorAll(sel)[i].querySelector('.tg-frame');
            return f && f.dataset.step === String(step);
        }""", arg=[widgets, i, step], timeout=10_000, polling=50)


def arm_change(page, selector, trigger="click"):
    """Start timing: from the next ``trigger`` event anywhere in the page (a
    click, a keydown) until the element at ``selector`` changes and the
    browser has painted it. ``changed_after`` collects the result."""
    page.evaluate(
        """([selector, trigger]) => {
            const target = document.querySelector(selector);
            if (!target) throw new Error('no element ' + selector);
            const before = target.outerHTML;
            let t0 = null;
            document.addEventListener(trigger, () => { t0 = performance.now(); },
                                      {capture: true, once: true});
            window.__tgChange = new Promise(resolve => {
                const observer = new MutationObserver(() => {
                    if (t0 === null || target.outerHTML === before) return;
                    observer.disconnect();
                    // measured once the change is in the DOM and the next frame is painted
                    requestAnimationFrame(() => resolve(performance.now() - t0));
                });
                observer.observe(target, {subtree: true, childList: true, attributes: true,
                                          characterData: true});
            });
        }""", [selector, trigger])


def changed_after(page, timeout_ms=30_000):
    """Milliseconds from the armed trigger to the change (see ``arm_change``)."""
    return page.evaluate(
        """timeout => Promise.race([window.__tgChange, new Promise((_, reject) =>
               setTimeout(() => reject(new Error('no change within ' + timeout + ' ms')),
                          timeout))])""", timeout_ms)


def kernel_output(page, code, timeout_ms=30_000):
    """Run ``code`` in the open notebook's kernel (not in a cell) and return
    what it printed; raises if it failed."""
    result = page.evaluate(
        """async ([code, timeout]) => {
            const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
            const future = kernel.requestExecute({code, silent: false, store_history: false});
            let out = '', error = null;
            future.onIOPub = msg => {
                if (msg.header.msg_type === 'stream') out += msg.content.text;
                if (msg.header.msg_type === 'error')
                    error = msg.content.ename + ': ' + msg.content.evalue;
            };
            await Promise.race([future.done, new Promise((_, reject) => setTimeout(
                () => reject(new Error('the kernel did not answer within ' + timeout + ' ms')),
                timeout))]);
            return {out, error};
        }""", [code, timeout_ms])
    if result["error"]:
        raise RuntimeError(f"the kernel raised {result['error']}")
    return result["out"]


#: The stepper views on show under the CSS selector ``root`` ("" for the whole page): a
#: running widget, its static text/html (an untrusted notebook, a page where no script
#: runs), the HTML view that steps in the page (where no widget manager holds the
#: widget's model). Each stepper should show one of them, never two.
VISIBLE_STEPPERS = """root => [...document.querySelectorAll(
        ['.tg-stepper-widget', '.tg-stepper.tg-static', '.tg-html-view']
            .map(s => (root + ' ' + s).trim()).join(', '))]
    .filter(e => e.checkVisibility())
    .map(e => e.className.split(' ').filter(c => !/^tg-[0-9a-f]{12}/.test(c)).join(' '))"""

#: The Play widget's icons in the steppers under ``root``: the glyph each draws (its
#: ``::before``), the font it asks for, and its width.
PLAY_ICONS = """root => [...document.querySelectorAll(
        (root + ' .tg-stepper-widget .widget-play i.fa').trim())]
    .map(i => {
        const before = getComputedStyle(i, '::before');
        return {icon: [...i.classList].find(c => c.startsWith('fa-')),
                content: before.content, font: before.fontFamily,
                width: i.getBoundingClientRect().width};
    })"""


def play_icons(page, root=""):
    """``{icon class: {content, font, width}}`` of the steppers' Play buttons; checks each
    draws a unicode glyph in the page's font, not a Font Awesome icon (Notebook 7 and HTML
    exports have no Font Awesome)."""
    glyphs = {"fa-play": '"\u25b6"', "fa-pause": '"\u275a\u275a"', "fa-stop": '"\u25a0"'}
    icons = {i["icon"]: i for i in page.evaluate(PLAY_ICONS, root)}
    assert icons, "no Play widget on show"
    for name, icon in icons.items():
        if name in glyphs:
            assert icon["content"] == glyphs[name], icons
            assert "awesome" not in icon["font"].lower() and icon["width"] > 4, icons
    return icons



def stateless(notebook):
    """A copy of ``notebook`` without its widget state (what JupyterLab saves by default)."""
    import nbformat
    return nbformat.from_dict(dict(notebook, metadata={
        k: v for k, v in notebook.metadata.items() if k != "widgets"}))


def step_the_html_view(page, root="", i=0, timeout_ms=10_000):
    """Step the ``i``-th stepper HTML view on show under ``root`` (``html_view.py``) with
    each of its controls, checking each moves the frame: Step (0 to 1), Back (to 0), the
    slider's right arrow and Home keys (to 1, to 0), a click at the slider's right end (to
    the last step), Back (one before), Play (from there on to the last step, stopping
    there). Returns the view's locator."""
    view = page.locator(f"{root} .tg-html-view:visible".strip()).nth(i)
    slider = view.locator(".tg-view-slider")

    def shown(step):
        view.locator(f".tg-frame[data-step='{step}']").wait_for(timeout=timeout_ms)
        assert view.locator(".tg-frame").count() == 1          # one frame in the page
        assert slider.input_value() == str(step)

    shown(0)
    last = int(slider.get_attribute("max"))
    assert last >= 2, last
    view.locator(".tg-view-step").click()
    shown(1)
    view.locator(".tg-view-back").click()
    shown(0)
    slider.press("ArrowRight")     # the slider's keys (JupyterLab would take them for cells)
    shown(1)
    slider.press("Home")
    shown(0)
    box = slider.bounding_box()
    page.mouse.click(box["x"] + box["width"] - 2, box["y"] + box["height"] / 2)
    shown(last)
    view.locator(".tg-view-back").click()
    shown(last - 1)
    view.locator(".tg-view-play").click()
    shown(last)
    assert "play" in view.locator(".tg-view-play").inner_text()   # stopped at the end
    return view
