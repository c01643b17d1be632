"""The student edition of the course, built by nbgrader itself.

``teachgrad student-edition DIR`` and ``make student`` (scripts/student_edition.py) call
``build``. The lessons are the instructor's source: each exercise's solution sits
between the markers (### BEGIN SOLUTION / ### END SOLUTION; "# BEGIN SOLUTION" works
too) in a cell with nbgrader's metadata, and each is followed by a locked check cell.
nbgrader's own generate_assignment turns them into the student edition: solutions
become stubs (`raise NotImplementedError("write your answer here, then run this cell
again")`, or "YOUR ANSWER HERE" in a written answer), outputs and the solved run's
widget state are cleared, check cells are locked, and a first cell says how the
edition works (course/header.ipynb). Each lesson is its own nbgrader assignment, named
as the lesson, in a throw-away course directory laid out with course/nbgrader_config.py,
exactly as ``make_course`` lays out an instructor's own: there, nbgrader's commands give
the same result. (otter-grader's form of a lesson: ``otter_edition``.)

Before nbgrader runs, each lesson's nbgrader metadata is checked (``problems``):
a notebook that is not valid JSON, a grade cell without points, a duplicate or
missing grade_id, solution markers in a cell that is not a solution cell (nbgrader
would leave that solution in the student edition) or markers that do not pair up.
Each problem is one line naming the notebook and the cell, and the build stops
(``BuildError``) with nothing written. After nbgrader, the edition is searched for
any line of a solution (``leaks``); only a clean edition is written to the folder.
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

from .files import course_folder, lessons

# The markers, as both nbgrader (which looks for "BEGIN SOLUTION" anywhere in a line) and
# otter-grader (which wants "# BEGIN SOLUTION" at the start of one) find them inside the
# lessons' "### BEGIN SOLUTION".
BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"


class BuildError(Exception):
    """The student edition cannot be built: one line per problem."""


def _where(path, k, cell):
    cell_id = f" (id {cell['id']})" if isinstance(cell, dict) and cell.get("id") else ""
    return f"{pathlib.Path(path).name}, cell {k}{cell_id}"


def _cell_problems(cell):
    """What is wrong with one cell's nbgrader metadata and markers (phrases)."""
    if not isinstance(cell, dict):
        return ["is not a cell (a JSON object)"]
    meta = cell.get("metadata", {}).get("nbgrader") if isinstance(
        cell.get("metadata"), dict) else None
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else str(source)
    begins, ends = source.count(BEGIN), source.count(END)
    found = []
    if (begins or ends) and not (isinstance(meta, dict) and meta.get("solution")):
        found.append("has BEGIN/END SOLUTION markers, but no nbgrader metadata saying "
                     "\"solution\": true: nbgrader would leave the solution in. Mark the cell "
                     "as a solution (Create Assignment toolbar: \"Autograded answer\")")
    elif begins != ends or _unpaired(source):
        found.append(f"has {begins} # BEGIN SOLUTION and {ends} # END SOLUTION: each "
                     f"BEGIN needs its END after it")
    if meta is None:
        return found
    if not isinstance(meta, dict):
        return found + ["has nbgrader metadata that is not a JSON object"]
    marked = any(meta.get(k) for k in ("grade", "solution", "task", "locked"))
    if marked and not (isinstance(meta.get("grade_id"), str) and meta["grade_id"]):
        found.append("has no grade_id in its nbgrader metadata: give it a unique name")
    points = meta.get("points")
    if meta.get("grade") and (isinstance(points, bool) or not isinstance(points, (int, float))
                              or points < 0):
        found.append(("is a grade cell without points" if points is None else
                      f"is a grade cell whose points are {points!r}")
                     + ": give it \"points\": a number >= 0 in its nbgrader metadata")
    return found


def _unpaired(source):
    depth = 0
    for line in source.splitlines():
        depth += (BEGIN in line) - (END in line)
        if depth not in (0, 1):
            return True
    return depth != 0


def problems(path):
    """One line per problem with the nbgrader metadata of the notebook at ``path``."""
    name = pathlib.Path(path).name
    try:
        notebook = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        return [f"{name}: cannot be read: {error}"]
    except json.JSONDecodeError as error:
        return [f"{name}: is not valid JSON (line {error.lineno}, column {error.colno}: "
                f"{error.msg}); was it cut short? Restore it from git."]
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        return [f"{name}: is not a notebook (no list of cells)"]
    found, seen = [], {}
    for k, cell in enumerate(cells):
        found += [f"{_where(path, k, cell)}: {said}" for said in _cell_problems(cell)]
        meta = cell.get("metadata", {}).get("nbgrader") if isinstance(cell, dict) and \
            isinstance(cell.get("metadata"), dict) else None
        grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
        if isinstance(grade_id, str) and grade_id:
            if grade_id in seen:
                found.append(f"{_where(path, k, cell)}: has grade_id {grade_id!r}, which cell "
                             f"{seen[grade_id]} has too: each cell needs its own")
            seen.setdefault(grade_id, k)
    return found


def nbgrader(*args, root):
    """Run an nbgrader command on the course directory ``root``; raises ``BuildError``
    with nbgrader's own last error line on failure (its full log is long)."""
    command = [sys.executable, "-m", "nbgrader", *args, f"--CourseDirectory.root={root}"]
    result = subprocess.run(command, cwd=root, capture_output=True, text=True)
    if result.returncode != 0:
        lines = [line.strip() for line in (result.stdout + result.stderr).splitlines()
                 if line.strip()]
        errors = [line for line in lines if "Error" in line or "error" in line] or lines
        raise BuildError(f"nbgrader {args[0]} failed: {errors[-1] if errors else 'no output'}")
    return result


def make_course(root, notebooks=None):
    """Lay ``root`` out as an nbgrader course: each lesson its own assignment, named as
    the lesson (``source/01_derivatives_on_a_tape/01_derivatives_on_a_tape.ipynb``), with
    the course's ``nbgrader_config.py`` and ``header.ipynb``. Returns the assignments'
    names, in order. An instructor's course directory is made the same way (``--course``)."""
    root = pathlib.Path(root)
    root.mkdir(parents=True, exist_ok=True)
    for name in ("nbgrader_config.py", "header.ipynb"):
        shutil.copy(course_folder() / name, root / name)
    names = []
    for notebook in notebooks or lessons():
        source = root / "source" / notebook.stem
        source.mkdir(parents=True, exist_ok=True)
        shutil.copy(notebook, source / notebook.name)
        names.append(notebook.stem)
    return names


def leaks(source, released):
    """Lines of the solutions in the notebook ``source`` that are still in ``released``
    (its student edition), as one line each."""
    solved = {c["metadata"]["nbgrader"]["grade_id"]: c for c in json.loads(
        pathlib.Path(source).read_text(encoding="utf-8"))["cells"]
        if c.get("metadata", {}).get("nbgrader", {}).get("solution")}
    found = []
    for k, cell in enumerate(json.loads(pathlib.Path(released).read_text())["cells"]):
        text = "".join(cell.get("source", ""))
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if BEGIN in text or any(
                line in text for line in _solution_lines(solved.get(grade_id))):
            found.append(f"{_where(source, k, cell)}: the student edition still holds "
                         f"its solution")
    return found


def _solution_lines(cell):
    if cell is None:
        return []
    source = "".join(cell.get("source", ""))
    inside, keep = BEGIN not in source, []
    for line in source.splitlines():
        if BEGIN in line or END in line:
            inside = "BEGIN" in line
        elif inside and len(line.strip()) > 12 and not line.strip().startswith("#"):
            keep.append(line.strip())
    return keep


def build(out, notebooks=None):
    """Write the student edition of ``notebooks`` (all lessons by default) into ``out``.
    Raises ``BuildError`` (and writes nothing) when a lesson's metadata is wrong or a
    solution would be left in."""
    out = pathlib.Path(out)
    notebooks = lessons() if notebooks is None else list(notebooks)
    found = [line for path in notebooks for line in problems(path)] or \
        ([] if notebooks else ["no lessons (NN_name.ipynb files) to build"])
    if found:
        raise BuildError("\n".join(found))
    with tempfile.TemporaryDirectory(prefix="teachgrad-course-") as root:
        make_course(root, notebooks)
        # "*": every assignment of the course in one nbgrader run (a run starts in seconds)
        nbgrader("generate_assignment", "*", "--no-db", "--force", root=root)
        released = {path: pathlib.Path(root, "release", path.stem, path.name)
                    for path in notebooks}
        found = [line for path, student in released.items() for line in leaks(path, student)]
        if found:
            raise BuildError("\n".join(found))
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        for student in released.values():
            shutil.copy(student, out / student.name)
    return sorted(out.glob("*.ipynb"))
