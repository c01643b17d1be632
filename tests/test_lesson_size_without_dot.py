"""Lesson 2 saved after running without Graphviz's ``dot`` is about as small as with it
(issue 38, part 6: it was 6.3 MB against 333 KB, each drawing carrying Viz.js).

The lesson is executed twice with nbclient, as a notebook server would run it:
once as the machine is, once with ``dot`` hidden from the kernel's PATH (only the
virtual environment's bin/ left on it). Without ``dot`` each drawing is saved as
its Python layout; the browser's Graphviz reaches the live page as an output that
is emptied when its cell finishes, so no copy of it is saved.
"""
import json
import os
import shutil
import sys

import pytest

from teachgrad.viz import wasm

nbformat = pytest.importorskip("nbformat", reason="the lesson is run by nbclient (test extra)")
NotebookClient = pytest.importorskip("nbclient", reason="the lesson is run by nbclient (test "
                                     "extra)").NotebookClient

LESSON = os.path.join(os.path.dirname(__file__), "..", "notebooks",
                      "02_backward_pass_as_a_queue.ipynb")
MOST = 1.5     # without dot / with dot, at most


def executed(path_dirs):
    notebook = nbformat.read(LESSON, as_version=4)
    old = os.environ["PATH"]
    os.environ["PATH"] = path_dirs
    try:
        NotebookClient(notebook, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": os.path.dirname(LESSON)}}).execute()
    finally:
        os.environ["PATH"] = old
    return notebook, len(nbformat.writes(notebook).encode("utf-8"))


def outputs(notebook, mime):
    return [output["data"][mime] for cell in notebook.cells if cell.cell_type == "code"
            for output in cell.outputs if mime in output.get("data", {})]


@pytest.mark.skipif(shutil.which("dot") is None,
                    reason="compares with the lesson drawn by dot: Graphviz is not installed")
def test_lesson_2_without_dot_is_at_most_half_as_big_again_as_with_dot():
    with_dot, with_size = executed(os.environ["PATH"])
    bin_dir = os.path.dirname(sys.executable)
    assert shutil.which("dot", path=bin_dir) is None
    without, without_size = executed(bin_dir)
    print(f"\nlesson 2 executed: {with_size:,} bytes with dot, {without_size:,} without "
          f"({without_size / with_size:.2f}x)")
    drawn = [svg for svg in outputs(with_dot, "image/svg+xml")]
    assert len(drawn) >= 2                                 # dot drew the drawings
    assert not outputs(without, "image/svg+xml")
    html = outputs(without, "text/html")
    laid_out = [h for h in html if h.startswith('<div id="teachgrad-viz-')]
    assert len(laid_out) == len(drawn) and all("data:image/svg+xml;base64," in h for h in laid_out)
    assert all(wasm.LAID_OUT_HERE in h for h in laid_out)
    assert html.count("") == len(drawn)                    # each drawing's loader, emptied
    assert "Viz.js" not in json.dumps(html)
    assert without_size <= MOST * with_size
