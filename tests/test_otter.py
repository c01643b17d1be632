"""The lessons with otter-grader, by otter's own tools (scripts/otter_edition.py).

Every lesson is converted to otter's notebook format and put through ``otter assign``
(in this process: about 0.05 s a lesson): its student edition keeps no line of any
solution, has otter's stub in every exercise and the check cells locked, and its
autograder has one test per nbgrader check cell, worth the same points. Lessons 1 and
7 are then graded with ``otter run``, the way an instructor grades one submission
without Docker: filled with the solutions they score full marks, left as stubs zero.
"""
import contextlib
import io
import json
import pathlib
import re
import subprocess
import sys

import nbformat
import pytest

pytest.importorskip("otter", reason="otter-grader is in the test extra (pyproject.toml)")
from otter.assign import main as otter_assign  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import otter_edition  # noqa: E402
from student_edition import _solution_lines as solution_lines  # noqa: E402
from test_student_edition import FOOLERS  # noqa: E402  (lessons 12 to 15's foolers)

sys.path.remove(str(ROOT / "scripts"))

LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
GRADED = [p for p in LESSONS if p.name.startswith(("01_", "07_"))]
FOOLED = [p for p in LESSONS if p.name.startswith(("12_", "13_", "14_", "15_"))]
STUB = re.compile(r"^( *)# YOUR CODE HERE\n *raise NotImplementedError\(.*\)$", re.M)


def assign(master):
    """``otter assign`` on ``master``; returns (student notebook, autograder folder)."""
    dist = master.parent / "dist"
    with contextlib.redirect_stdout(io.StringIO()):
        otter_assign(str(master), str(dist), no_pdfs=True)
    return nbformat.read(dist / "student" / master.name, as_version=4), dist / "autograder"


@pytest.fixture(scope="module")
def assigned(tmp_path_factory):
    out = tmp_path_factory.mktemp("otter")
    masters = otter_edition.write(out, LESSONS)
    return {master.name: assign(master) for master in masters}


def checks(path):
    return [c for c in nbformat.read(path, as_version=4).cells if otter_edition.is_check(c)]


def test_every_lessons_student_edition_has_otters_stubs_and_no_solution(assigned):
    for path in LESSONS:
        student, _ = assigned[path.name]
        lesson = nbformat.read(path, as_version=4).cells
        solved = [c for c in lesson if otter_edition.grading(c).get("solution")]
        text = "\n".join(c.source for c in student.cells)
        given = "\n".join(c.source for c in lesson if c not in solved)  # shown in the lesson too
        assert "BEGIN SOLUTION" not in text and "BEGIN PROMPT" not in text, path.name
        for cell in solved:
            for line in solution_lines(cell):
                assert line not in text or line in given, \
                    f"{path.name}: a solution line is left: {line}"
        code = [c for c in solved if c.cell_type == "code"]
        regions = sum(c.source.count("# BEGIN SOLUTION") for c in code)
        assert len(STUB.findall(text)) == regions > 0, path.name
        assert "Run All stops at the first exercise" in student.cells[0].source
        locked = [c for c in student.cells if c.cell_type == "code"
                  and c.metadata.get("editable") is False]
        assert [c.source for c in locked] == [c.source for c in checks(path)], path.name
        assert not any(c.get("outputs") for c in student.cells), path.name
        assert "widgets" not in student.metadata, path.name


def test_every_check_cell_is_an_otter_test_worth_its_points(assigned):
    for path in LESSONS:
        _, autograder = assigned[path.name]
        config = json.loads(next(autograder.glob("*.ipynb")).read_text())["metadata"]
        tests = config["otter"]["tests"]
        expected = {otter_edition.question_name(otter_edition.grading(c)["grade_id"]):
                    otter_edition.grading(c)["points"] for c in checks(path)}
        assert sorted(tests) == sorted(expected), path.name
        for name, points in expected.items():     # each test is an exception-based file
            assert f"\npoints = {points}\n" in tests[name], (path.name, name)


def solution_regions(cell):
    """The code between each pair of markers, dedented to the marker's indentation."""
    regions, lines, indent = [], None, 0
    for line in cell.source.split("\n"):
        marker = otter_edition.MARKER.match(line)
        if marker and marker.group(2) == "BEGIN":
            lines, indent = [], len(marker.group(1))
        elif marker:
            regions.append("\n".join(lines))
            lines = None
        elif lines is not None:
            lines.append(line[indent:])
    return regions


def solved(student, path, answers=None):
    """The otter student edition with every stub replaced by the lesson's solution, or by
    ``answers[grade_id]`` (one snippet per solution region) where given."""
    notebook = nbformat.from_dict(json.loads(json.dumps(student)))
    cells = [c for c in nbformat.read(path, as_version=4).cells
             if c.cell_type == "code" and otter_edition.grading(c).get("solution")]
    regions = iter([r for c in cells for r in (
        answers[otter_edition.grading(c)["grade_id"]] if answers else solution_regions(c))])

    def one(match):
        return "\n".join(match.group(1) + line for line in next(regions).split("\n"))
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.source = STUB.sub(one, cell.source)
    assert next(regions, None) is None
    return notebook


def otter_run(autograder, notebook, folder):
    """``otter run`` (otter's grading of one submission, no Docker): the results."""
    folder.mkdir()
    nbformat.write(notebook, folder / "submission.ipynb")
    zipped = next(autograder.glob("*.zip"))
    result = subprocess.run([str(pathlib.Path(sys.executable).parent / "otter"), "run",
                             "--no-logo", "-a", str(zipped), "-o", str(folder),
                             str(folder / "submission.ipynb")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    tests = json.loads((folder / "results.json").read_text())["tests"]
    failed = [t["name"] for t in tests if "max_score" in t and t["score"] != t["max_score"]]
    said = "\n".join(t.get("output") or "" for t in tests)    # "Public Tests" too
    assert not any(f"{name} results: All test cases passed" in said for name in failed), said
    return {t["name"]: (t["score"], t["max_score"]) for t in tests if "max_score" in t}


@pytest.mark.parametrize("path", GRADED, ids=lambda p: p.stem)
def test_otter_gives_solutions_full_marks_and_stubs_none(assigned, path, tmp_path):
    student, autograder = assigned[path.name]
    points = sum(otter_edition.grading(c)["points"] for c in checks(path))
    full = otter_run(autograder, solved(student, path), tmp_path / "solver")
    assert sum(max_score for _, max_score in full.values()) == points > 0
    assert all(score == max_score for score, max_score in full.values()), full
    none = otter_run(autograder, student, tmp_path / "stubs")
    assert all(score == 0 for score, _ in none.values()) and len(none) == len(full), none


@pytest.mark.parametrize("path", FOOLED, ids=lambda p: p.stem)
def test_otter_gives_the_foolers_nothing_and_the_solutions_full_marks(assigned, path, tmp_path):
    student, autograder = assigned[path.name]
    full = otter_run(autograder, solved(student, path), tmp_path / "solver")
    assert full and all(score == max_score for score, max_score in full.values()), full
    fooled = otter_run(autograder, solved(student, path, FOOLERS), tmp_path / "fooler")
    assert all(score == 0 for score, _ in fooled.values()) and len(fooled) == len(full), fooled
