"""The student edition (make student), built and graded by nbgrader itself.

The lessons in notebooks/ are the solved edition (nbval tests them as they are).
Here: every exercise is marked for nbgrader and followed by a check cell; the
student edition that nbgrader builds has stubs in place of the solutions, and
running it, every check cell fails with a message that teaches, never with a
NameError and never quoting the solution; filled with plausible wrong answers,
every check cell fails with a tg.exercises message too; and nbgrader's autograder
gives a notebook filled with the solutions full marks and one left as stubs none.
"""
import json
import os
import pathlib
import re
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "student_edition.py"
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
TEACHING_ERRORS = {"NotYet", "NotWritten"}     # tg.exercises' verdicts


def nbgrader_meta(cell):
    return cell.metadata.get("nbgrader", {})


def is_check(cell):
    return cell.cell_type == "code" and nbgrader_meta(cell).get("grade") \
        and not nbgrader_meta(cell).get("solution")


def is_solution(cell):
    return bool(nbgrader_meta(cell).get("solution"))


def solution_lines(cell):
    """The lines between the markers (the whole cell when it has none), stripped."""
    lines = cell.source.splitlines()
    if "### BEGIN SOLUTION" in cell.source:
        inside, keep = False, []
        for line in lines:
            if "### BEGIN SOLUTION" in line:
                inside = True
            elif "### END SOLUTION" in line:
                inside = False
            elif inside:
                keep.append(line)
        lines = keep
    return [line.strip() for line in lines if len(line.strip()) > 12
            and not line.strip().startswith("#")]


def test_every_exercise_is_marked_and_followed_by_a_check():
    exercises = 0
    for path in LESSONS:
        cells = nbformat.read(path, as_version=4).cells
        code = [c for c in cells if c.cell_type == "code"]
        for i, cell in enumerate(code):
            if "BEGIN SOLUTION" in cell.source:
                assert is_solution(cell), f"{path.name}: markers outside a solution cell"
            if is_solution(cell):
                exercises += 1
                assert cell.source.count("### BEGIN SOLUTION") == \
                    cell.source.count("### END SOLUTION") > 0, (path.name, cell.id)
                following = code[i + 1] if i + 1 < len(code) else None
                assert following is not None and is_check(following), \
                    f"{path.name}: the exercise {nbgrader_meta(cell)['grade_id']} has no check " \
                    f"cell after it"
                assert "tg.exercises" in following.source, following.source
    assert exercises >= 25


@pytest.fixture(scope="module")
def student_edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    subprocess.run([sys.executable, str(SCRIPT), str(out)], check=True, capture_output=True,
                   timeout=300)
    return out


def test_student_edition_has_stubs_not_solutions(student_edition):
    built = sorted(p.name for p in student_edition.glob("*.ipynb"))
    assert built == [p.name for p in LESSONS]
    for path in LESSONS:
        student = nbformat.read(student_edition / path.name, as_version=4)
        solved = {nbgrader_meta(c)["grade_id"]: c
                  for c in nbformat.read(path, as_version=4).cells if is_solution(c)}
        text = json.dumps([c.source for c in student.cells])
        assert "BEGIN SOLUTION" not in text
        # no widget state of the solved run (100-330 KB a lesson) travels to the students
        assert set(student.metadata) <= {"kernelspec", "language_info"}, path.name
        assert "Run All stops at the first exercise" in student.cells[0].source, path.name
        for cell in student.cells:
            assert not cell.get("outputs"), f"{path.name}: outputs were not cleared"
            if is_solution(cell):
                stub = 'raise NotImplementedError("write your answer here, then run this ' \
                    'cell again")' if cell.cell_type == "code" else "YOUR ANSWER HERE"
                assert stub in cell.source, (path.name, cell.source)
                for line in solution_lines(solved[nbgrader_meta(cell)["grade_id"]]):
                    assert line not in cell.source, (path.name, line)


def run(notebook, cwd):
    NotebookClient(notebook, timeout=300, allow_errors=True, kernel_name="python3",
                   resources={"metadata": {"path": str(cwd)}}).execute()
    return notebook


def test_every_check_fails_with_a_message_that_teaches(student_edition):
    """Run as a student would, top to bottom, having written nothing yet."""
    for path in LESSONS:
        solved = [c for c in nbformat.read(path, as_version=4).cells if is_solution(c)]
        answers = [line for cell in solved for line in solution_lines(cell)]
        notebook = run(nbformat.read(student_edition / path.name, as_version=4),
                       student_edition)
        checks = [c for c in notebook.cells if is_check(c)]
        assert checks
        stubs = [o for c in notebook.cells if is_solution(c) for o in c.get("outputs", [])
                 if o.output_type == "error"]
        assert all(o.evalue == "write your answer here, then run this cell again"
                   for o in stubs), path.name
        for cell in checks:
            errors = [o for o in cell.outputs if o.output_type == "error"]
            where = f"{path.name}, {nbgrader_meta(cell)['grade_id']}"
            assert errors, f"{where}: the check passed with nothing written"
            error = errors[0]
            assert error.ename in TEACHING_ERRORS, f"{where}: {error.ename}: {error.evalue}"
            assert error.evalue.startswith("Not yet: ") and len(error.evalue) > 60, where
            # the message, not a traceback through teachgrad (NotYet._render_traceback_)
            assert len(error.traceback) <= 2 and "Traceback" not in error.traceback[0], where
            assert "The exercise asks for" in error.evalue, f"{where}: {error.evalue}"
            assert not any(line in error.evalue for line in answers), \
                f"{where}: the message quotes the solution: {error.evalue}"


# -- grading with nbgrader's autograder --------------------------------------------------

GRADED = [p for p in LESSONS if p.name.startswith(("01_", "07_"))]


def nbgrader(root, *args, timeout=600):
    """Run the venv's ``nbgrader`` program as the docs say, without the venv on PATH: its
    gradebook starts the ``alembic`` program, which course/nbgrader_config.py finds."""
    bin_dir = str(pathlib.Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if p != bin_dir) or "/usr/bin:/bin"
    result = subprocess.run([os.path.join(bin_dir, "nbgrader"), *args], cwd=root,
                            capture_output=True, text=True, timeout=timeout,
                            env=dict(os.environ, PATH=path))
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def autograde(root, lessons, students):
    """Each lesson its own nbgrader assignment, laid out as ``--course`` lays out an
    instructor's course directory (with course/nbgrader_config.py), submitted by each of
    ``students`` (``{name: fill(notebook, lesson path)}``) and graded by nbgrader's
    autograder. Returns ``{(lesson stem, student): (score, max_score)}``."""
    edition = _script_module()
    names = edition.make_course(root, lessons)
    assert names == [path.stem for path in lessons]
    for name in names:
        nbgrader(root, "generate_assignment", name, "--force")
    for student, fill_in in students.items():
        for path in lessons:
            submitted = root / "submitted" / student / path.stem
            submitted.mkdir(parents=True)
            notebook = nbformat.read(root / "release" / path.stem / path.name, as_version=4)
            nbformat.write(fill_in(notebook, path), submitted / path.name)
    for name in names:
        nbgrader(root, "autograde", name, "--create", "--force")

    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        return {(path.stem, student): (found.score, found.max_score)
                for path in lessons for student in students
                for found in [gradebook.find_submission(path.stem, student)]}


def test_autograder_gives_solutions_full_marks_and_stubs_none(tmp_path):
    scores = autograde(tmp_path, GRADED, {"solver": fill_with_solutions,
                                          "stubs": lambda notebook, path: notebook})
    for path in GRADED:
        score, max_score = scores[(path.stem, "solver")]
        checks = sum(1 for c in nbformat.read(path, as_version=4).cells if is_check(c))
        assert max_score >= checks > 0, path.name
        assert score == max_score, path.name
        assert scores[(path.stem, "stubs")][0] == 0, path.name


# Answers that fooled the checks of lessons 12 and 13 before issue 39, and lessons 14 and 15's, one
# per solution region: each writes into an input, ignores its arguments, or does the exercise
# another way than it asks.
FOOLERS = {
    "l12-ex1-step": ["h.numpy()[...] += 0.25\nreturn tg.tanh(h @ W + x_t @ U + b)"],
    "l12-ex2-predict": ['predicted_fate = {0.5: "vanish", 1.0: "vanishes", 2.0: "explodes", '
                        '4.0: "explodes"}'],
    "l12-ex3-truncate": ["xs.numpy()[...] *= 0.5\n"
                         "for start in range(0, steps, k):\n"
                         "    hs = run_rnn(params, xs[start:start + k], h)\n"
                         "    total = total + tg.sum((readout(params, hs) - ys[start:start + k]) "
                         "** 2)\n"
                         "    h = tg.stop_gradient(hs[-1])"],
    "l13-ex1-solution": ["x, = values\n"
                         "return tg.stack([tg.ops.bind(clip_norm_op, x[i], max_norm=max_norm, "
                         "axes=axes) for i in range(x.shape[0])]), True"],
    "l13-ex2-solution": ["X.numpy()[...] = 0.0\nreturn tg.zeros(w.shape)"],
    "l13-ex3-solution": ["return J_vmap"],
    "l14-ex1-solution": ['predicted_ops = {"multiply": 1, "sin": 1, "add": 1}'],
    "l14-ex2-solution": ["return fn"],
    "l14-ex3-solution": ["def run_schedule(x, rates):\n"
                         "    for lr in rates:\n"
                         "        x = x - lr * tg.sin(x)\n"
                         "    return x"],
    "l15-ex1-solution": ["return tg.stack([tg.signal.ifft(g[i]) * g.shape[-1] "
                         "for i in range(g.shape[0])]) if len(g.shape) > 1 "
                         "else tg.signal.ifft(g) * g.shape[-1]"],
}
FOOLED = [p for p in LESSONS if p.name.startswith(("12_", "13_", "14_", "15_"))]


def fill_with_foolers(notebook, path):
    for cell in notebook.cells:
        if cell.cell_type == "code" and is_solution(cell):
            fill(cell, FOOLERS[nbgrader_meta(cell)["grade_id"]])
    return notebook


def test_autograder_gives_the_foolers_nothing_and_the_solutions_full_marks(tmp_path):
    scores = autograde(tmp_path, FOOLED, {"solver": fill_with_solutions,
                                          "fooler": fill_with_foolers})
    for path in FOOLED:
        score, max_score = scores[(path.stem, "solver")]
        assert score == max_score > 0, path.name
        assert scores[(path.stem, "fooler")] == (0, max_score), path.name


def fill_with_solutions(notebook, solved_path):
    """Put each solution (markers removed) in place of its stub in ``notebook``."""
    solved = {nbgrader_meta(c)["grade_id"]: c.source
              for c in nbformat.read(solved_path, as_version=4).cells if is_solution(c)}
    for cell in notebook.cells:
        if is_solution(cell):
            cell.source = re.sub(r"\s*#+ (BEGIN|END) SOLUTION", "",
                                 solved[nbgrader_meta(cell)["grade_id"]])
    return notebook


def test_the_authoring_guides_examples_run():
    """docs/authoring.md's Python examples: a course registers and checks its own exercise."""
    import teachgrad as tg
    page = (ROOT / "docs" / "authoring.md").read_text()
    namespace = {}
    try:
        for block in re.findall(r"```python\n(.*?)```", page, flags=re.S):
            exec(compile(block, "docs/authoring.md", "exec"), namespace)
        exercise = tg.exercises.get("softsign")
        assert exercise.check(lambda g, ans, x: g / (1 + tg.abs(x)) ** 2).ok
        assert not exercise.check(lambda g, ans, x: g / (1 + tg.abs(x)))
    finally:
        if "softsign" in tg.exercises.names():
            tg.exercises.unregister("softsign")


# A plausible wrong answer for each exercise (one snippet per solution region): the usual
# slips the checks name. Each check cell must then fail with a tg.exercises message too.
WRONG = {
    "l01-ex1-solution": ["return np.exp(x) * x ** 2"],
    "l01-ex2-solution": ["return g * tg.exp(x)"],
    "l02-ex1-solution": ['predicted_counts = {"p": 2, "q": 1, "r": 1, "s": 1, "t": 0}'],
    "l02-ex2-solution": ["return 0.0"],
    "l02-ex3-solution": ["predicted_adds = 4\npredicted_add_ns = 1"],
    "l02-ex4-solution": ['predicted_pops = ["t", "s", "r", "q", "p"]'],
    "l03-ex1-solution": ["return {}"],
    "l03-ex2-solution": ["return [None for s in sources]"],
    "l04-ex1-solution": ['predicted_nodes = Counter({"ones_like": 1, "multiply": 2})'],
    "l04-ex2-solution": ["total_dx, = tg.gradients(f, x)\n"
                         "partial_dx, partial_dy = tg.gradients(f, [x, y])"],
    "l04-ex3-rules": ["return x / ans", "return g * y / ans"],
    "l04-ex3-nodes": ['predicted_rule_nodes = Counter({"multiply": 3})'],
    "l05-ex1-solution": ["return tg.tanh(x)"],
    "l05-ex2-solution": ['predicted_passes = {"loss": (1, 50), "curve": (1, 30), "sine": (6, 6)}'],
    "l05-ex3-solution": ["left = 0.0\nright = 0.0"],
    "l05-ex4-solution": ["return x_dot * (1 - ans * ans) * 2"],
    "l06-ex1-solution": ["return g * 3 * x"],
    "l06-ex2-solution": ["return tg.hvp(f, [x], [v])[0] * 2"],
    "l07-ex1-solution": ["ds_dx = 1.0"],
    "l07-ex2-saved": ['predicted_saved = {"term", "x"}'],
    "l07-ex3-solution": ["return tg.cond(x >= 0.0, lambda: x, lambda: x)"],
    "l07-ex4-solution": ["predicted_iterations = 3\npredicted_slope = 1.5 ** 3"],
    "l08-ex1-solution": ["return g * tg.exp(x)"],
    "l08-ex2-solution": ["n = tg.sqrt(tg.sum(x * x))\nreturn n, lambda upstream: upstream * x / n"],
    "l08-ex3-solution": ["return tg.sign(x), lambda upstream: upstream"],
    "l09-ex1-solution": ["return tg.matmul(g, y)", "return tg.matmul(tg.transpose(x), g)"],
    "l09-ex2-solution": ["backward_flops = 2 * forward_flops + 1"],
    "l09-ex3-solution": ["my_count = 12"],
    "l10-ex1-rule": ["return g * (tg.softmax(logits, axis=-1) - onehot)"],
    "l10-ex2-decay": ["W1, b1, W2, b2 = params\n"
                      "return loss_fn(params, x, onehot) + lam * tg.sum(W1 * W1)"],
    "l11-ex1-input": ["kh, kw = w.shape[0], w.shape[1]\n"
                      "padded = tg.pad(g, [(0, 0), (kh - 1, kh - 1), (kw - 1, kw - 1), (0, 0)])\n"
                      "return tg.nn.conv2d(padded, tg.transpose(w, (0, 1, 3, 2)), strides=1, "
                      "padding=\"VALID\")"],
    "l11-ex2-filters": ["return tg.nn.conv2d(tg.transpose(x, (3, 1, 2, 0)), "
                        "tg.transpose(g, (1, 2, 0, 3)), strides=1, padding=\"VALID\")"],
    "l12-ex1-step": ["return tg.tanh(h @ W + x_t @ U)"],
    "l12-ex2-predict": ['predicted_fate = {0.5: "vanishes", 1.0: "neither", 2.0: "explodes", '
                        '4.0: "explodes"}'],
    "l12-ex3-truncate": ["for start in range(0, steps, k):\n"
                         "    hs = run_rnn(params, xs[start:start + k], h)\n"
                         "    total = total + tg.sum((readout(params, hs) - ys[start:start + k]) "
                         "** 2)\n"
                         "    h = hs[-1]"],
    "l13-ex1-solution": ["x, = values\n"
                         "return tg.ops.bind(clip_norm_op, x, max_norm=max_norm, axes=axes), "
                         "True"],
    "l13-ex2-solution": ["per_example = tg.vmap(tg.grad(loss), in_axes=(None, 0, 0))(w, X, Y)\n"
                         "return tg.mean(per_example, axis=0)"],
    "l13-ex3-solution": ["tangents = tg.constant(np.eye(x.shape[0]))\n"
                         "return tg.vmap(lambda t: tg.jvp(f, [x], [t])[1])(tangents)"],
    "l14-ex1-solution": ['predicted_ops = {"multiply": 5, "sin": 5, "add": 1}'],
    "l14-ex2-solution": ["rw = Rewriter(fn)\n"
                         "for node in fn.nodes:\n"
                         "    rw.copy(node)\n"
                         "return rw.finish()"],
    "l14-ex3-solution": ["@tg.function\n"
                         "def float_step(x, lr):\n"
                         "    return x - lr * tg.sin(x)\n"
                         "\n"
                         "def run_schedule(x, rates):\n"
                         "    for lr in rates:\n"
                         "        x = float_step(x, lr)\n"
                         "    return x"],
    "l15-ex1-solution": ["return tg.conj(tg.signal.ifft(g)) * g.shape[-1]"],
}
STUB = re.compile(r"^( *)# YOUR CODE HERE\n *raise NotImplementedError\(.*\)$", re.M)


def fill(cell, snippets):
    """Put each snippet in place of the cell's next stub, at the stub's indentation."""
    pieces = iter(snippets)

    def one(match):
        indent = match.group(1)
        return "\n".join(indent + line for line in next(pieces).split("\n"))
    cell.source = STUB.sub(one, cell.source)


def test_wrong_answers_get_messages_that_teach(student_edition):
    for path in LESSONS:
        notebook = nbformat.read(student_edition / path.name, as_version=4)
        for cell in notebook.cells:
            if cell.cell_type == "code" and is_solution(cell):
                fill(cell, WRONG[nbgrader_meta(cell)["grade_id"]])
        run(notebook, student_edition)
        for cell in notebook.cells:
            if is_check(cell):
                where = f"{path.name}, {nbgrader_meta(cell)['grade_id']}"
                errors = [o for o in cell.outputs if o.output_type == "error"]
                assert errors, f"{where}: a wrong answer passed the check"
                assert errors[0].ename in TEACHING_ERRORS, \
                    f"{where}: {errors[0].ename}: {errors[0].evalue}"
                assert errors[0].evalue.startswith("Not yet: "), where


# -- a build that must stop: each problem in one line, nothing written, nothing leaked ----------

def _script_module():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import student_edition
    finally:
        sys.path.remove(str(SCRIPT.parent))
    return student_edition


def _broken_lessons(folder):
    """Lesson 1 broken in each way the build must catch, one notebook per way."""
    source = LESSONS[0]
    text = source.read_text()

    def variant(name, change):
        notebook = json.loads(text)
        cells = notebook["cells"]
        meta = [c["metadata"].get("nbgrader", {}) for c in cells]
        change(cells, meta)
        (folder / name).write_text(json.dumps(notebook))
    folder.mkdir()
    checks = [k for k, m in enumerate(map(nbgrader_meta, nbformat.reads(text, 4).cells))
              if m.get("grade") and not m.get("solution")]
    solutions = [k for k, m in enumerate(map(nbgrader_meta, nbformat.reads(text, 4).cells))
                 if m.get("solution")]
    variant("01_no_points.ipynb", lambda cells, meta: meta[checks[0]].pop("points"))
    variant("02_duplicate_id.ipynb", lambda cells, meta: meta[solutions[1]].update(
        grade_id=meta[solutions[0]]["grade_id"]))
    variant("03_no_metadata.ipynb", lambda cells, meta: cells[solutions[0]]["metadata"].pop(
        "nbgrader"))
    (folder / "04_truncated.ipynb").write_text(text[:len(text) // 2])
    return [solution_lines(nbformat.reads(text, 4).cells[k]) for k in solutions]


def test_broken_metadata_stops_the_build_with_one_line_per_problem(tmp_path):
    answers = [line for lines in _broken_lessons(tmp_path / "lessons") for line in lines]
    out = tmp_path / "student"
    result = subprocess.run([sys.executable, str(SCRIPT), str(out), "--lessons",
                             str(tmp_path / "lessons")], capture_output=True, text=True,
                            timeout=120)
    said = result.stdout + result.stderr
    assert result.returncode != 0 and not out.exists(), said
    lines = said.strip().splitlines()
    assert lines[0] == "student edition not built:" and len(lines) == 5, said
    for line, (name, what) in zip(lines[1:], [
            ("01_no_points.ipynb, cell", "without points"),
            ("02_duplicate_id.ipynb, cell", "has grade_id"),
            ("03_no_metadata.ipynb, cell", "no nbgrader metadata"),
            ("04_truncated.ipynb:", "not valid JSON")]):
        assert line.startswith(name) and what in line, line
    assert "Traceback" not in said and len(said) < 2000
    assert not any(answer in said for answer in answers)


def test_a_solution_nbgrader_left_in_is_caught_and_nbgrader_errors_are_one_line(tmp_path):
    edition = _script_module()
    source = LESSONS[0]
    released = nbformat.read(source, as_version=4)
    for cell in released.cells:          # as if nbgrader had left every solution in place
        cell.source = re.sub(r"\s*### (BEGIN|END) SOLUTION", "", cell.source)
    nbformat.write(released, tmp_path / source.name)
    found = edition.leaks(source, tmp_path / source.name)
    assert found and all(line.startswith(f"{source.name}, cell ") for line in found)
    assert edition.leaks(source, source) != [] and not edition.problems(source)
    with pytest.raises(edition.BuildError) as stopped:
        edition.nbgrader("generate_assignment", "no-such-assignment", "--no-db",
                         root=tmp_path)
    assert "\n" not in str(stopped.value) and "no-such-assignment" in str(stopped.value)
    with pytest.raises(edition.BuildError, match="no lessons"):
        edition.build(tmp_path / "out", [])
    assert not (tmp_path / "out").exists()
