"""The course from a pip install: the sdist and the wheel, built here, put in a fresh venv.

``python -m build`` makes the sdist and then the wheel from the sdist (as pip makes one
from a downloaded sdist), without build isolation so no network is needed: the test
extra has setuptools and build. The wheel goes into a new venv, in a temporary folder
with no repository around it, with ``pip install --no-index --no-deps``; its
dependencies (numpy, ipywidgets, graphviz, nbgrader for the student edition) are this
environment's, reached through a .pth file, so nothing is downloaded. A .pth line only
adds a folder to sys.path (it does not run that folder's own .pth files, so this
environment's editable teachgrad stays out), and the venv's site-packages, holding the
wheel, comes first: each test checks that the teachgrad it ran is the wheel's.
(TEACHGRAD_WHEEL_FROM_REGISTRY=1 installs them from the registry instead.)
There, ``teachgrad lessons``, ``student-edition``, ``otter`` and ``doctor`` run, and
``python -m teachgrad``, each as an instructor would type it.
"""
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

import pytest

import teachgrad

pytest.importorskip("build", reason="python -m build (the test extra) builds the wheel")

ROOT = pathlib.Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
NAME = f"teachgrad-{teachgrad.__version__}"
BUILD_MINUTES = 5
#: Where this environment's teachgrad dependencies live (the fresh venv reaches them).
DEPENDENCIES = ("numpy", "ipywidgets", "graphviz", "nbgrader", "nbformat")
#: TEACHGRAD_WHEEL_FROM_REGISTRY=1: install the wheel's dependencies (the grading extra) from
#: the package registry instead (a few minutes, and the network), to check the wheel's
#: declared dependencies themselves.
FROM_REGISTRY = os.environ.get("TEACHGRAD_WHEEL_FROM_REGISTRY") == "1"


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    result = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir",
                             str(out), str(ROOT)], capture_output=True, text=True,
                            timeout=60 * BUILD_MINUTES)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out / f"{NAME}.tar.gz", out / f"{NAME}-py3-none-any.whl"


@pytest.fixture(scope="module")
def venv(tmp_path_factory, dist):
    home = tmp_path_factory.mktemp("instructor")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(home / "venv")],
                   check=True, timeout=120)
    python = home / "venv" / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
    if FROM_REGISTRY:       # the wheel with its dependencies, as an instructor installs it
        subprocess.run(pip + [f"{dist[1]}[grading]"], check=True, timeout=60 * 15,
                       env=_clean_env(home))
        return home
    subprocess.run(pip + ["--no-index", "--no-deps", str(dist[1])], check=True,
                   timeout=300, env=_clean_env(home))
    site = pathlib.Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip())
    paths = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]} | {
        str(pathlib.Path(importlib.util.find_spec(name).origin).parents[1])
        for name in DEPENDENCIES}
    (site / "zz_teachgrad_test_dependencies.pth").write_text("\n".join(sorted(paths)) + "\n")
    return home


def _clean_env(home):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}
    env["PATH"] = f"{home / 'venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def run(home, *command, ok=True):
    """Run ``command`` in ``home`` (no repository around it) with the venv first on PATH."""
    result = subprocess.run(list(command), cwd=home, env=_clean_env(home), capture_output=True,
                            text=True, timeout=300)
    if ok:
        assert result.returncode == 0, (command, result.stdout[-3000:], result.stderr[-3000:])
    return result


def test_the_wheel_carries_the_license_the_lessons_and_the_metadata(dist):
    with zipfile.ZipFile(dist[1]) as wheel:
        names = set(wheel.namelist())
        for path in LESSONS:
            shipped = f"teachgrad/course/shipped/notebooks/{path.name}"
            assert wheel.read(shipped) == path.read_bytes(), shipped
        for name in ("nbgrader_config.py", "header.ipynb"):
            assert wheel.read(f"teachgrad/course/shipped/course/{name}") == \
                (ROOT / "course" / name).read_bytes()
        assert wheel.read(f"{NAME}.dist-info/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
        metadata = wheel.read(f"{NAME}.dist-info/METADATA").decode()
        entry_points = wheel.read(f"{NAME}.dist-info/entry_points.txt").decode()
    assert "teachgrad/viz/static/viz-global.js" in names
    assert not [n for n in names if n.startswith("tests/") or "conftest" in n]
    assert f"Version: {teachgrad.__version__}\n" in metadata
    assert "License-Expression: Apache-2.0\n" in metadata and "License-File: LICENSE" in metadata
    for version in ("3.10", "3.11", "3.12", "3.13"):
        assert f"Classifier: Programming Language :: Python :: {version}\n" in metadata
    assert "Classifier: Intended Audience :: Education" in metadata
    assert "Project-URL: Source, " in metadata and "Author: " in metadata
    assert "teachgrad = teachgrad.cli:main" in entry_points


def test_the_sdist_builds_the_wheel_and_ships_no_tests_that_cannot_run(dist):
    with tarfile.open(dist[0]) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
        assert sdist.extractfile(f"{NAME}/LICENSE").read() == (ROOT / "LICENSE").read_bytes()
    assert {"LICENSE", "CHANGELOG.md", "README.md", "setup.py", "pyproject.toml",
            "course/nbgrader_config.py", "course/header.ipynb"} <= names
    assert {f"notebooks/{p.name}" for p in LESSONS} <= names
    assert not [n for n in names if n.startswith("tests/") or n.endswith("conftest.py")]


def test_the_venv_runs_the_wheels_teachgrad_not_the_checkouts(venv):
    found = run(venv, "python", "-c", "import teachgrad, teachgrad.course as c; "
                "print(teachgrad.__file__); print(c.lessons_folder())").stdout.split()
    assert all(pathlib.Path(p).is_relative_to(venv / "venv") for p in found), found
    assert pathlib.Path(found[1]).parts[-3:] == ("course", "shipped", "notebooks")


def test_teachgrad_lessons_writes_the_lessons_as_they_ship(venv):
    result = run(venv, "teachgrad", "lessons", "course")
    written = sorted((venv / "course").iterdir())
    assert [p.name for p in written] == [p.name for p in LESSONS]
    assert all(new.read_bytes() == old.read_bytes() for new, old in zip(written, LESSONS))
    assert f"{len(LESSONS)} lessons in course" in result.stdout
    again = run(venv, "teachgrad", "lessons", "course", ok=False)
    assert again.returncode == 2 and "teachgrad lessons: course is not empty" in again.stderr
    assert "Traceback" not in again.stderr
    assert len(list((venv / "course").iterdir())) == len(LESSONS)


def test_teachgrad_student_edition_builds_what_make_student_builds(venv):
    result = run(venv, "teachgrad", "student-edition", "student")
    written = sorted((venv / "student").glob("*.ipynb"))
    assert [p.name for p in written] == [p.name for p in LESSONS], result.stdout
    for path in written:
        cells = json.loads(path.read_text())["cells"]
        text = "".join("".join(c["source"]) for c in cells)
        assert "BEGIN SOLUTION" not in text, path.name
        assert 'raise NotImplementedError("write your answer here' in text, path.name
        assert not any(c.get("outputs") for c in cells), path.name
    assert f"student edition: {len(LESSONS)} lessons in student" in result.stdout


def test_teachgrad_otter_writes_each_lesson_in_otters_format(venv):
    run(venv, "teachgrad", "otter", "otter")
    for path in LESSONS:
        master = json.loads((venv / "otter" / path.stem / path.name).read_text())
        assert "".join(master["cells"][0]["source"]).startswith("# ASSIGNMENT CONFIG")


def test_teachgrad_doctor_says_what_the_environment_has(venv):
    report = run(venv, "teachgrad", "doctor").stdout
    assert f"teachgrad {teachgrad.__version__}: {len(LESSONS)} lessons, from the installed " \
        f"package" in report
    for line in ("numpy ", "ipywidgets ", "widget front end", "nbgrader ", "CuPy"):
        assert f"{line}" in report, line
    assert "Graphviz dot" in report or "the bundled Graphviz (no dot)" in report
    assert run(venv, "python", "-m", "teachgrad", "doctor").stdout == report


def test_python_m_teachgrad_is_the_command(venv):
    assert run(venv, "python", "-m", "teachgrad", "--version").stdout.strip() == \
        f"teachgrad {teachgrad.__version__}"
    bare = run(venv, "python", "-m", "teachgrad", ok=False)
    assert bare.returncode == 2 and "student-edition" in bare.stdout
    unknown = run(venv, "teachgrad", "lesons", "x", ok=False)
    assert unknown.returncode == 2 and "invalid choice: 'lesons'" in unknown.stderr
