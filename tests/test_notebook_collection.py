"""A plain ``pytest`` works without nbval; with it, the lessons run under nbval as before.

notebooks/conftest.py switches nbval on (with sanitize.cfg) where it is installed, so
pyproject.toml's addopts holds no ``--nbval`` that would stop a run without it
("unrecognized arguments"). Here a copy of that conftest and sanitize.cfg sits beside a
one-cell notebook whose stored output differs from a fresh run's only by a memory
address: without nbval it is skipped with the reason (and under make test's
TEACHGRAD_REQUIRE_NBVAL=1 the run stops); with nbval it passes, through sanitize.cfg,
and fails once its stored output really differs.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

NOTEBOOK = {"cells": [{"cell_type": "code", "execution_count": 1, "id": "a", "metadata": {},
                       "source": "print(object.__repr__(object()).split()[-1][:-1])",
                       "outputs": [{"name": "stdout", "output_type": "stream",
                                    "text": "0x7f0000000000\n"}]}],
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                        "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def _pytest(folder, *args, **env):
    """pytest run in ``folder`` with ``env`` added; make test's own
    TEACHGRAD_REQUIRE_NBVAL is not passed on unless ``env`` sets it."""
    inherited = {k: v for k, v in os.environ.items() if k != "TEACHGRAD_REQUIRE_NBVAL"}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs",
                           *args], cwd=folder, capture_output=True, text=True, timeout=300,
                          env={**inherited, **env})


@pytest.fixture
def lessons_folder(tmp_path):
    """notebooks/'s conftest.py and sanitize.cfg, with one notebook whose stored output
    differs from a fresh run's only by a memory address (sanitize.cfg masks it)."""
    for name in ("conftest.py", "sanitize.cfg"):
        shutil.copy(ROOT / "notebooks" / name, tmp_path / name)
    (tmp_path / "01_lesson.ipynb").write_text(json.dumps(NOTEBOOK))
    return tmp_path


def test_without_nbval_the_notebooks_skip_and_say_why(lessons_folder):
    result = _pytest(lessons_folder, "-p", "no:nbval")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SKIPPED [1] 01_lesson.ipynb: nbval is not installed" in result.stdout
    assert "1 skipped" in result.stdout
    assert "nbval is not installed, so the lessons' notebooks are not run" in result.stdout
    required = _pytest(lessons_folder, "-p", "no:nbval", TEACHGRAD_REQUIRE_NBVAL="1")
    assert required.returncode == 4
    assert "TEACHGRAD_REQUIRE_NBVAL=1 (make test), but nbval is not installed" in \
        required.stderr


def test_with_nbval_the_notebooks_run_and_compare_through_sanitize_cfg(lessons_folder):
    pytest.importorskip("nbval", reason="nbval is in the test extra")
    result = _pytest(lessons_folder)
    assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout
    notebook = json.loads(json.dumps(NOTEBOOK))
    notebook["cells"][0]["outputs"][0]["text"] = "not an address\n"
    (lessons_folder / "01_lesson.ipynb").write_text(json.dumps(notebook))
    assert "1 failed" in _pytest(lessons_folder).stdout
