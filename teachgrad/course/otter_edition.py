"""A lesson in otter-grader's notebook format, for ``otter assign`` (the otter route).

    teachgrad otter OUT      # or: python scripts/otter_edition.py OUT [LESSON.ipynb ...]
    cd OUT/01_derivatives_on_a_tape && otter assign 01_derivatives_on_a_tape.ipynb dist

The lessons are written for nbgrader: a solution cell with nbgrader's metadata and the
markers ``### BEGIN SOLUTION`` / ``### END SOLUTION``, then a locked check cell that
raises ``tg.exercises.NotYet`` until the answer is right. otter-grader reads neither the
metadata nor ``### BEGIN SOLUTION`` (it wants ``# BEGIN SOLUTION`` at the start of a line,
inside a question block), so ``write`` writes each lesson in otter's own format
(https://otter-grader.readthedocs.io, "Otter Assign", notebook format v1), changing
nothing of what the student reads or runs:

- each exercise becomes a question (``# BEGIN QUESTION`` ... ``# END QUESTION`` raw
  cells), named after its check cell and worth the check cell's points;
- its solution cell goes in the question's solution block, with the markers written
  as otter's (``# BEGIN SOLUTION NO PROMPT``), followed by a prompt that otter puts in
  the student edition: the same stub as nbgrader's, ``raise NotImplementedError("write
  your answer here, then run this cell again")``;
- its test is the check cell itself: a public exception-based otter test that runs the check
  cell's code on the notebook's variables, so a right answer scores and a stub does not;
- the check cell stays in the notebook after the question, locked, so a student sees
  the same teaching messages as in nbgrader's edition (otter adds no grader.check cell);
- a written answer (nbgrader's "manually graded answer", 0 points) becomes a manual
  question whose text otter replaces with its "Type your answer here" prompt;
- the student edition's first cell is course/header.ipynb's, and the solved run's
  widget state is dropped.

``otter assign`` then writes the student edition (``dist/student``) and the autograder
(``dist/autograder/autograder.zip``); ``otter run -a dist/autograder/autograder.zip
submission.ipynb`` grades one submission here, ``otter grade`` many in Docker.
tests/test_otter.py does both on lessons 1 and 7 and converts every lesson.
"""
import json
import pathlib
import re

import nbformat

from .files import course_folder

STUB = 'raise NotImplementedError("write your answer here, then run this cell again")'
MARKER = re.compile(r"^(\s*)#+ (BEGIN|END) SOLUTION\s*$")
CONFIG = """# ASSIGNMENT CONFIG
name: {name}
init_cell: false
check_all_cell: false
export_cell: false
run_tests: false
tests:
  ok_format: false
generate:
  pdf: false
  zips: false
"""


def grading(cell):
    """The cell's nbgrader metadata ({} when it has none)."""
    return cell.get("metadata", {}).get("nbgrader", {})


def is_check(cell):
    return cell.cell_type == "code" and grading(cell).get("grade") \
        and not grading(cell).get("solution")


def raw(text):
    return nbformat.v4.new_raw_cell(text)


def question_name(grade_id):
    """An otter question name (a Python identifier) from an nbgrader grade_id."""
    return re.sub(r"\W", "_", grade_id)


def otter_markers(source):
    """``source`` with nbgrader's markers written as otter's, each solution region
    followed by otter's prompt: the stub the student edition shows instead."""
    lines = []
    for line in source.split("\n"):
        found = MARKER.match(line)
        if not found:
            lines.append(line)
            continue
        indent, which = found.groups()
        if which == "BEGIN":
            lines.append(f"{indent}# BEGIN SOLUTION NO PROMPT")
        else:
            lines += [f"{indent}# END SOLUTION", f'{indent}""" # BEGIN PROMPT',
                      f"{indent}# YOUR CODE HERE", f"{indent}{STUB}", f'{indent}""" # END PROMPT']
    return "\n".join(lines)


def test_cell(check):
    """An otter exception-based test that runs the check cell's code on the notebook's
    variables (``env``); the check raises unless the answer is right. It is public (not
    hidden): the check cell is in the student edition anyway, and otter's summary of the
    public tests must say that a failed check failed, not "All test cases passed!"."""
    meta = grading(check)
    source = (f'""" # BEGIN TEST CONFIG\npoints: {meta.get("points", 1)}\nhidden: false\n'
              f'""" # END TEST CONFIG\n'
              f"def test_check(env):\n"
              f"    exec(compile({check.source!r}, {meta['grade_id']!r}, 'exec'), env)\n")
    return nbformat.v4.new_code_cell(source)


def locked(cell):
    cell = nbformat.from_dict(json.loads(json.dumps(cell)))
    cell.metadata.pop("nbgrader", None)
    cell.metadata.pop("execution", None)
    cell.metadata.update(editable=False, deletable=False)
    cell.outputs, cell.execution_count = [], None
    return cell


def question(check, solution=None):
    """The cells of one question: its solution (if any) and the check as its test."""
    meta = grading(check)
    cells = [raw(f"# BEGIN QUESTION\nname: {question_name(meta['grade_id'])}\n"
                 f"points: {meta.get('points', 1)}\ncheck_cell: false")]
    if solution is not None:
        solved = nbformat.v4.new_code_cell(otter_markers(solution.source))
        cells += [raw("# BEGIN SOLUTION"), solved, raw("# END SOLUTION")]
    return cells + [raw("# BEGIN TESTS"), test_cell(check), raw("# END TESTS"),
                    raw("# END QUESTION"), locked(check)]


def written_answer(cell):
    """A written answer (a markdown solution cell): a manual question worth 0 points."""
    text = nbformat.v4.new_markdown_cell(cell.source)
    return [raw(f"# BEGIN QUESTION\nname: {question_name(grading(cell)['grade_id'])}\n"
                f"manual: true\npoints: 0"),
            raw("# BEGIN SOLUTION"), text, raw("# END SOLUTION"), raw("# END QUESTION")]


def otter_master(path):
    """The lesson at ``path`` as otter's master notebook (nbformat, not yet written)."""
    lesson = nbformat.read(path, as_version=4)
    header = nbformat.read(course_folder() / "header.ipynb", as_version=4).cells
    cells = [raw(CONFIG.format(name=pathlib.Path(path).stem))]
    cells += [nbformat.v4.new_markdown_cell(c.source) for c in header]
    pending = None                       # a solution cell waiting for its check
    for cell in lesson.cells:
        meta = grading(cell)
        if cell.cell_type == "code" and meta.get("solution"):
            if pending is not None:
                raise ValueError(f"{path.name}: {grading(pending)['grade_id']} has no check "
                                 f"cell after it")
            pending = cell
        elif is_check(cell):
            cells += question(cell, pending)
            pending = None
        elif cell.cell_type == "markdown" and meta.get("solution"):
            cells += written_answer(cell)
        else:
            plain = nbformat.from_dict(json.loads(json.dumps(cell)))
            plain.metadata.pop("nbgrader", None)
            if plain.cell_type == "code":
                plain.outputs, plain.execution_count = [], None
            cells.append(plain)
    if pending is not None:
        raise ValueError(f"{path.name}: {grading(pending)['grade_id']} has no check cell")
    master = nbformat.v4.new_notebook(cells=cells)
    master.metadata = {k: v for k, v in lesson.metadata.items()
                       if k in ("kernelspec", "language_info")}
    return master


def write(out, paths):
    """Write each lesson's otter master to ``out/<lesson>/<lesson>.ipynb``; returns them."""
    written = []
    for path in map(pathlib.Path, paths):
        folder = pathlib.Path(out) / path.stem
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(otter_master(path), folder / path.name)
        written.append(folder / path.name)
    return written
