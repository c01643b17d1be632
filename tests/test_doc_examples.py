"""The README's examples run, and print what the README says they print; the docs
site's plain Python examples (getting started, the home page) run too.

In a ```python block, the lines that start with "# " at the margin right after
a print are its output (the README writes them so; the docs pages comment
inline, and there the examples only have to run). Each block runs after the
ones before it on its page, as in a reader's session.
"""
import contextlib
import io
import pathlib
import re

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
PAGES = ["README.md", "docs/index.md", "docs/getting-started.md"]


def _blocks(page):
    return re.findall(r"```python\n(.*?)```", (REPO / page).read_text(), flags=re.S)


def test_readme_has_examples():
    assert len(_blocks("README.md")) >= 3


def _stated_output(code):
    """The "# " lines at the margin right after a line that prints."""
    stated, after_print = [], False
    for line in code.splitlines():
        if after_print and line.startswith("# "):
            stated.append(line[2:])
        else:
            after_print = "print(" in line
    return stated


@pytest.mark.parametrize("page, index", [(page, i) for page in PAGES
                                         for i in range(len(_blocks(page)))])
def test_example_prints_what_it_says(page, index):
    blocks = _blocks(page)
    namespace = {}
    for earlier in blocks[:index]:     # blocks build on each other, as in a reader's session
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(earlier, page, "exec"), namespace)
    code = blocks[index]
    expected = _stated_output(code)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, page, "exec"), namespace)
    if expected or page == "README.md":   # the docs pages' examples comment inline
        assert printed.getvalue().splitlines() == expected
