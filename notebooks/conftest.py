"""nbval settings for the lessons.

nbval compares every output MIME type of a cell except a few (widget model
ids, PNG and JPEG). Drawings are SVG when Graphviz's ``dot`` is installed and
HTML (drawn in the browser by teachgrad's WebAssembly Graphviz) when it is
not, and their layout depends on the Graphviz version: neither says whether
the lesson's numbers are right. So the lessons compare their text outputs
(printed values, asserts, reprs) and skip SVG and HTML.

nbval itself is switched on here, not in pyproject.toml's addopts, so that a plain
``pytest`` works without it: where nbval is installed, the lessons run under it with
sanitize.cfg (as ``pytest --nbval --nbval-sanitize-with notebooks/sanitize.cfg``);
where it is not, each lesson is reported as skipped with the reason, and under
``make test`` (TEACHGRAD_REQUIRE_NBVAL=1) a missing nbval stops the run instead.
"""
import os
from pathlib import Path

import pytest

SKIPPED_MIME_TYPES = ("image/svg+xml", "text/html")

HERE = Path(__file__).resolve().parent
SANITIZE = HERE / "sanitize.cfg"
NO_NBVAL = ("nbval is not installed, so the lessons' notebooks are not run: pip install "
            "nbval (it is in the test extra: pip install -e '.[test]'), or run make test")


def _nbval(config):
    return config.pluginmanager.hasplugin("nbval")


def pytest_configure(config):
    if _nbval(config):
        if not (config.option.nbval or config.option.nbval_lax):
            config.option.nbval = True
        if config.option.nbval_sanitize_with is None:
            config.option.nbval_sanitize_with = str(SANITIZE)
    elif os.environ.get("TEACHGRAD_REQUIRE_NBVAL") == "1":
        raise pytest.UsageError(f"TEACHGRAD_REQUIRE_NBVAL=1 (make test), but {NO_NBVAL}")


class NotRun(pytest.File):
    """A lesson collected without nbval: one test, skipped with the reason."""

    def collect(self):
        item = Skipped.from_parent(self, name="not run")
        item.add_marker(pytest.mark.skip(reason=NO_NBVAL))
        yield item


class Skipped(pytest.Item):
    def runtest(self):                 # never called: the skip marker stops it first
        pytest.skip(NO_NBVAL)

    def reportinfo(self):
        return self.path, 0, f"{self.path.name}: not run"


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".ipynb" and not _nbval(parent.config):
        return NotRun.from_parent(parent, path=file_path)


def pytest_collection_modifyitems(items):
    for item in items:
        notebook = getattr(item, "parent", None)
        if (hasattr(notebook, "skip_compare") and Path(str(item.fspath)).suffix == ".ipynb"
                and HERE in Path(str(item.fspath)).resolve().parents):
            missing = tuple(m for m in SKIPPED_MIME_TYPES if m not in notebook.skip_compare)
            notebook.skip_compare = notebook.skip_compare + missing
