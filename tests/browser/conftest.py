"""Fixtures for the browser tests: a JupyterLab server and Debian's Chromium.

``make test`` installs Chromium (scripts/install-chromium.sh) and Playwright
(the ``test`` extra, with PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1) and sets
TEACHGRAD_REQUIRE_BROWSER=1, so there a missing browser is an error. Run by
hand without Chromium, the tests are skipped and say how to get it.
"""
import os
from pathlib import Path

import pytest
from labserver import CHROMIUM, CHROMIUM_ARGS, REPO, JupyterLabServer


def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.browser)


def _missing(what):
    message = (f"{what}; run `make test`, which installs it "
               f"(or: sudo apt-get install chromium; pip install playwright)")
    if os.environ.get("TEACHGRAD_REQUIRE_BROWSER") == "1":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def output_dir():
    """Where screenshots go: test-output/browser/ in the repository (git ignores it)."""
    path = REPO / "test-output" / "browser"
    path.mkdir(parents=True, exist_ok=True)
    return path


# Module scope: the server and the browser are gone before the next tests run.
@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server whose root is a fresh folder (``lab.root_dir``);
    tests copy the notebooks they open there. Stopped, kernels and all, at
    the end of the test module."""
    work = tmp_path_factory.mktemp("jupyterlab")
    root = work / "root"
    root.mkdir()
    server = JupyterLabServer(work / "home", root).start()
    try:
        yield server
    finally:
        server.stop()
        assert server.process.poll() is not None, "JupyterLab is still running"


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Playwright is not installed")
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        _missing(f"Chromium is not installed at {CHROMIUM}")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                              headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser, lab, request, output_dir):
    """A fresh browser tab (its own context: no shared storage between tests).
    When the test fails, a screenshot and the server's log tail are saved."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    tab = context.new_page()
    console = []
    tab.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    tab.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    try:
        yield tab
    finally:
        report = getattr(request.node, "rep_call", None)
        if report is not None and report.failed:
            name = request.node.name
            try:
                tab.screenshot(path=str(output_dir / f"{name}-failed.png"), full_page=True)
            except Exception as error:   # the page may be gone; keep the other evidence
                console.append(f"(no screenshot: {error})")
            (output_dir / f"{name}-failed.log").write_text(
                "\n".join(console) + "\n\n--- JupyterLab log ---\n" + lab.log_tail(200))
        context.close()


SMALL_STEPPER = """
import teachgrad as tg
x = tg.constant(0.5, name="x")
with tg.GradientTape() as tape:
    tape.watch(x)
    a = tg.sin(x, name="a")
    z = tg.multiply(a, x, name="z")
with tg.viz.record() as rec:
    tape.gradient(z, x)
stepper = tg.viz.BackpropStepper(rec.traces[0])
stepper
"""


@pytest.fixture(scope="session")
def small_stepper(tmp_path_factory):
    """A notebook with one small BackpropStepper, executed once by nbclient with its widget
    state saved (as JupyterLab's "Save Widget State Automatically" does), and the
    stepper's text (``stepper.text()``, printed by its second cell). ``labserver.stateless(nb)``
    gives a copy saved as JupyterLab saves by default: with no widget state."""
    import nbformat
    from nbclient import NotebookClient
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(SMALL_STEPPER),
                      nbformat.v4.new_code_cell("print(stepper.text())")]
    work = tmp_path_factory.mktemp("small_stepper")
    NotebookClient(notebook, timeout=120, kernel_name="python3", store_widget_state=True,
                   resources={"metadata": {"path": str(work)}}).execute()
    assert "application/vnd.jupyter.widget-state+json" in notebook.metadata["widgets"]
    return notebook, notebook.cells[1].outputs[0]["text"], work


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, "rep_" + report.when, report)
