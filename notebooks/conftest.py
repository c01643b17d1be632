"""nbval settings for the lessons.

nbval compares every output MIME type of a cell except a few (widget model
ids, PNG and JPEG). Drawings are SVG when Graphviz's ``dot`` is installed and
HTML (drawn in the browser by teachgrad's WebAssembly Graphviz) when it is
not, and their layout depends on the Graphviz version: neither says whether
the lesson's numbers are right. So the lessons compare their text outputs
(printed values, asserts, reprs) and skip SVG and HTML.
"""
from pathlib import Path

SKIPPED_MIME_TYPES = ("image/svg+xml", "text/html")

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items):
    for item in items:
        notebook = getattr(item, "parent", None)
        if (hasattr(notebook, "skip_compare") and Path(str(item.fspath)).suffix == ".ipynb"
                and HERE in Path(str(item.fspath)).resolve().parents):
            missing = tuple(m for m in SKIPPED_MIME_TYPES if m not in notebook.skip_compare)
            notebook.skip_compare = notebook.skip_compare + missing
