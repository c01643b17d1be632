"""The version range pyproject.toml declares is the one `make test-oldest` tests.

`make test-oldest` runs the core's tests with the floors pinned in
tests/constraints/oldest.txt, on the Python that scripts/versions-venv.sh picks; these
tests keep those equal to the floors pyproject.toml declares, so that raising a floor in
one place and not the other fails here. They also check that a missing interpreter
stops the run with what to install (CI must fail then, not pass without the run).
"""
import pathlib
import re
import shutil
import subprocess

try:
    import tomllib
except ImportError:  # Python 3.10: pytest brings tomli there
    import tomli as tomllib

REPO = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "versions-venv.sh"


def _release(text):
    """'2.0' and '2.0.0' -> (2, 0, 0): a version's release numbers, zero-padded."""
    parts = tuple(int(n) for n in text.split("."))
    return parts + (0,) * (3 - len(parts))


def _declared_floors():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    floors = {}
    for requirement in project["dependencies"]:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", requirement.replace(" ", ""))
        assert match, f"{requirement!r}: a dependency is declared as name>=floor"
        floors[match[1].lower()] = match[2]
    return floors, project["requires-python"]


def _pins(name):
    pins = {}
    for line in (REPO / "tests" / "constraints" / name).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            package, version = line.split("==")
            pins[package.lower()] = version
    return pins


def test_oldest_run_pins_every_declared_floor():
    floors, _ = _declared_floors()
    pins = _pins("oldest.txt")
    assert set(floors) == {"numpy", "ipywidgets", "graphviz"}
    for package, floor in floors.items():
        assert _release(pins[package]) == _release(floor), (package, pins[package], floor)


def test_newest_run_pins_nothing():
    assert _pins("newest.txt") == {}


def test_oldest_run_uses_the_oldest_python_declared():
    _, requires_python = _declared_floors()
    assert requires_python == ">=3.10"
    assert "oldest) want=3.10;" in SCRIPT.read_text()


def _bare_path(tmp_path):
    """A PATH holding only the tools the script needs before it looks for Python."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("dirname", "ls", "sort", "tail"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    return str(bin_dir)


def _run(tmp_path, which, **env):
    return subprocess.run(
        [shutil.which("bash"), str(SCRIPT), which], capture_output=True, text=True,
        timeout=60, env={"PATH": _bare_path(tmp_path), "HOME": str(tmp_path),
                         "PYENV_ROOT": str(tmp_path / "pyenv"),
                         "TEACHGRAD_VERSIONS_VENV": str(tmp_path / "venv"), **env})


def test_a_missing_interpreter_fails_and_says_what_to_install(tmp_path):
    # No pyenv versions, no python3.13 on PATH: the script stops before building anything.
    result = _run(tmp_path, "newest")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "make test-newest needs Python 3.13, and none was found" in result.stderr
    assert "pyenv install 3.13" in result.stderr
    assert result.stdout == "" and not (tmp_path / "venv").exists()


def test_a_named_interpreter_of_another_version_is_refused(tmp_path):
    result = _run(tmp_path, "oldest", PYTHON_OLDEST=shutil.which("true"))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "make test-oldest needs Python 3.10" in result.stderr
    assert f"PYTHON_OLDEST={shutil.which('true')}" in result.stderr
    assert result.stdout == "" and not (tmp_path / "venv").exists()


def test_an_interpreter_of_another_version_found_on_path_is_refused(tmp_path):
    fake = tmp_path / "python3.13"
    fake.write_text("#!/bin/sh\necho 3.12\n")   # answers the version query wrongly
    fake.chmod(0o755)
    result = _run(tmp_path, "newest", PYTHON_NEWEST=str(fake))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "which is Python 3.12" in result.stderr
    assert result.stdout == "" and not (tmp_path / "venv").exists()
