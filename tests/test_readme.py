"""The README's examples run, and print what the README says they print.

In a ```python block of README.md, the lines that start with "# " at the
margin right after a print are its output; the test runs each block after the ones
before it and compares what it printed with those lines.
"""
import contextlib
import io
import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 3


def _stated_output(code):
    """The "# " lines at the margin right after a line that prints."""
    stated, after_print = [], False
    for line in code.splitlines():
        if after_print and line.startswith("# "):
            stated.append(line[2:])
        else:
            after_print = "print(" in line
    return stated


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_prints_what_it_says(index):
    namespace = {}
    for earlier in BLOCKS[:index]:     # blocks build on each other, as in a reader's session
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(earlier, "README.md", "exec"), namespace)
    code = BLOCKS[index]
    expected = _stated_output(code)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md", "exec"), namespace)
    assert printed.getvalue().splitlines() == expected
