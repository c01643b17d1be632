"""Every lesson exercise's check against the whole catalogue of foolers (issue 39).

Each lesson with a contract (``tg.exercises.contracts()``) runs here once, cell by cell,
as a kernel would. At each exercise's check cell the lesson's own solution is replaced in
turn by every fooler of the catalogue and the check cell runs, unchanged: an answer that
mutates its inputs, ignores them, is right on one example only, is off by a factor or a
transpose, returns NaN, None, a string, a list or a numpy array, raises, loops forever or
prints without end; the contract's own ``forbidden`` answers (the forbidden mode: a loop
where one vectorized call is asked for, reverse mode for forward); a stub of each earlier
exercise the check runs; and for a prediction, a typo and words of the wrong kind. Every
one must fail, within its time budget, with a message in the teaching voice (no traceback,
no wall of numbers), and the solution and each of the contract's ``accepted`` answers must
pass. A new contract is covered without editing this file.
"""
import contextlib
import io
import json
import math
import pathlib
import re
import time

import matplotlib
import numpy as np
import pytest

import teachgrad as tg
from teachgrad.exercises import guard
from teachgrad.exercises.lessons import contracts

matplotlib.use("Agg")
ROOT = pathlib.Path(__file__).resolve().parent.parent
CONTRACTS = contracts()
BUDGET = 8.0            # seconds one fooler's check may take (limits below are shorter)
PRINTED = 20_000        # characters one fooler's check may print


def _on_result(out, change):
    """``change`` applied to a function's result (to the outputs of a rule's pair)."""
    if isinstance(out, tuple) and out and isinstance(out[0], tg.Tensor):
        return (change(out[0]),) + out[1:]
    return change(out)


def _halve(value):
    """Halve every array in ``value`` in place: through .numpy(), Variable.assign."""
    if isinstance(value, tg.Variable):
        value.assign(value * 0.5)
    elif isinstance(value, tg.Tensor):
        value.numpy()[...] *= 0.5
    elif isinstance(value, np.ndarray):
        value *= 0.5
    elif isinstance(value, (list, tuple)):
        for v in value:
            _halve(v)


def _first_only(t):
    if len(t.shape) == 0 or t.shape[0] < 2:
        return t * 2.0
    return tg.stack([t[0]] * t.shape[0])


def _flip(t):
    if len(t.shape) >= 2:
        return tg.transpose(t)
    return tg.flip(t, (0,)) if len(t.shape) == 1 and t.shape[0] > 1 else t - 1.0


def _spin(*args, **kwargs):
    while True:
        try:
            time.sleep(0.001)
        except Exception:       # noqa: BLE001 -- a student's catch-all must not help
            pass


def _prints(*args, **kwargs):
    while True:
        print("h_t = " * 20)


def _raises(*args, **kwargs):
    raise ValueError("operands could not be broadcast together")


def _stub(*args, **kwargs):
    raise NotImplementedError()


def _function_foolers(ref):
    """The catalogue for an answer that is a function (or a rule), made from ``ref``."""
    memo = []

    def ignores_arguments(*a, **k):
        if not memo:
            memo.append(ref(*a, **k))
        return memo[0]

    def mutates_then_answers(*a, **k):
        _halve(a)
        return ref(*a, **k)

    def answers_then_mutates(*a, **k):
        out = ref(*a, **k)
        _halve(a)
        return out

    def changed(change):
        return lambda *a, **k: _on_result(ref(*a, **k), change)
    return {
        "the stub": _stub,
        "mutates its inputs, then answers": mutates_then_answers,
        "answers, then mutates its inputs": answers_then_mutates,
        "ignores its arguments (its first result, always)": ignores_arguments,
        "right on the first example only": changed(_first_only),
        "off by a factor of 1.5": changed(lambda t: t * 1.5),
        "off by a constant 0.1": changed(lambda t: t + 0.1),
        "transposed (one axis: reversed)": changed(_flip),
        "NaN": changed(lambda t: t * math.nan),
        "None": lambda *a, **k: None,
        "a string": changed(lambda t: "the answer"),
        "a list": changed(lambda t: t.numpy().tolist()),
        "a numpy array": changed(lambda t: t.numpy()),
        "raises": _raises,
        "loops forever": _spin,
        "prints without end": _prints,
        "not a function": 3.0,
    }


def _prediction_foolers(ref, words):
    def mapped(fn):
        return {k: fn(v) for k, v in ref.items()} if isinstance(ref, dict) else fn(ref)
    other = {w: words[(i + 1) % len(words)] for i, w in enumerate(words)}
    return {
        "a typo (the last letter dropped)": mapped(lambda v: v[:-1]),
        "words of the wrong kind": mapped(lambda v: other.get(v, v)),
        "the same word everywhere": mapped(lambda v: words[0]),
        "None": None,
        "a string": words[0],
        "a list": list(ref.values()) if isinstance(ref, dict) else [ref],
        "NaN": mapped(lambda v: math.nan),
    }


def _foolers(contract, ns):
    """``{name: (value or None, source or None, words the message must name)}``."""
    ref = ns[contract.name]
    made = _prediction_foolers(ref, contract.words) if contract.kind == "prediction" \
        else _function_foolers(ref)
    foolers = {name: (value, None, ()) for name, value in made.items()}
    if contract.kind == "prediction":
        name = "a typo (the last letter dropped)"
        foolers[name] = (made[name], None, contract.words)
    for what, source in contract.forbidden.items():
        foolers[f"forbidden: {what}"] = (None, source, ())
    for needed, number in contract.needs:
        foolers[f"{needed} still a stub"] = (
            ref, f"def {needed}(*args, **kwargs):\n    raise NotImplementedError()\n",
            (f"`{needed}`", f"exercise {number}"))
    return foolers


class _Kept:
    """The arrays of a lesson's namespace, put back after a fooler changed them."""

    def __init__(self, ns):
        self.kept = []
        for value in ns.values():
            for v in value if isinstance(value, (list, tuple)) else [value]:
                if isinstance(v, tg.Variable):
                    self.kept.append((v, v.numpy().copy()))
                elif isinstance(v, tg.Tensor) and v.value is not None:
                    self.kept.append((v, np.array(v.value, copy=True)))
        self.names = dict(ns)

    def restore(self, ns):
        for v, array in self.kept:
            if isinstance(v, tg.Variable):
                v.assign(array)
            elif not np.array_equal(v.numpy(), array, equal_nan=True):
                v.value.flags.writeable = True
                v.value[...] = array
        ns.clear()
        ns.update(self.names)


def _run_cell(source, ns):
    """Run a check cell as a kernel would: (error or None, printed, seconds)."""
    out, start = io.StringIO(), time.monotonic()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, "<check cell>", "exec"), ns)
    except BaseException as error:      # noqa: BLE001 -- what a student would see
        return error, out.getvalue(), time.monotonic() - start
    return None, out.getvalue(), time.monotonic() - start


def _verdict(error, printed, seconds, words):
    """None when the check failed the fooler as it should; else what went wrong."""
    if error is None:
        return "passed"
    if not isinstance(error, tg.exercises.NotYet):
        return f"raw {type(error).__name__}: {str(error)[:200]}"
    message = str(error)
    if not message.startswith("Not yet"):
        return f"a message not in the teaching voice: {message[:200]}"
    if seconds > BUDGET:
        return f"took {seconds:.1f} s"
    if len(printed) > PRINTED:
        return f"printed {len(printed):,} characters"
    if "Traceback" in message or len(re.findall(r"-?\d+\.\d+", message)) > 24:
        return f"a wall of numbers or a traceback: {message[:200]}"
    missing = [w for w in words if w not in message]
    if missing:
        return f"does not name {missing}: {message[:300]}"
    return None


def _lesson_path(number):
    return next((ROOT / "notebooks").glob(f"{number:02d}_*.ipynb"))


def _run_lesson(number, results):
    """Run lesson ``number``, trying the foolers at each contract's check cell."""
    cells = json.loads(_lesson_path(number).read_text())["cells"]
    by_cell = {c.cell: c for c in CONTRACTS if c.lesson == number}
    ns = {"__name__": "__main__"}
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        contract = by_cell.get(grade_id)
        if contract is not None:
            results[contract.name] = _try_foolers(contract, source, ns)
        error, _, _ = _run_cell(source, ns)
        assert error is None, f"lesson {number}, cell {grade_id}: {error!r}"
        plt = ns.get("plt")
        if plt is not None:
            plt.close("all")


def _try_foolers(contract, check_source, ns):
    kept, verdicts = _Kept(ns), {}
    for name, (value, source, words) in _foolers(contract, ns).items():
        if source is not None:
            exec(compile(source, f"<{name}>", "exec"), ns)
        if value is not None or source is None:
            ns[contract.name] = value
        error, printed, seconds = _run_cell(check_source, ns)
        verdicts[name] = (_verdict(error, printed, seconds, words),
                          str(error)[:300] if error is not None else "")
        kept.restore(ns)
    for what, source in contract.accepted.items():
        exec(compile(source, f"<{what}>", "exec"), ns)
        error, _, _ = _run_cell(check_source, ns)
        verdicts[f"accepted: {what}"] = ("failed: " + str(error)[:300], "") \
            if error is not None else (None, "")
        kept.restore(ns)
    return verdicts


@pytest.fixture(scope="module")
def verdicts():
    results = {}
    short = guard.Limits(rule=1.0, again=4.0, answer=2.0, engine=1.0, deep=4.0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(guard, "LIMITS", short)
        for number in sorted({c.lesson for c in CONTRACTS}):
            _run_lesson(number, results)
    return results


def test_every_lesson_exercise_has_a_contract():
    """Each check cell of a lesson with contracts is some contract's cell."""
    for number in sorted({c.lesson for c in CONTRACTS}):
        cells = json.loads(_lesson_path(number).read_text())["cells"]
        checks = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in cells
                  if c.get("metadata", {}).get("nbgrader", {}).get("grade")
                  and not c["metadata"]["nbgrader"].get("solution")}
        assert checks <= {c.cell for c in CONTRACTS}, number


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: f"l{c.lesson}-{c.name}")
def test_no_fooler_passes_and_the_solutions_do(contract, verdicts):
    got = verdicts[contract.name]
    wrong = {name: verdict for name, (verdict, _) in got.items() if verdict is not None}
    assert not wrong, "\n".join(f"{name}: {verdict}" for name, verdict in wrong.items())


def test_a_stub_reached_from_a_later_cell_says_which_exercise_to_write(capsys):
    """In a kernel, a lesson exercise's stub run through teachgrad (tg.scan) is one line."""
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell()
    assert tg.exercises.explain_stubs(shell)
    shell.run_cell("import teachgrad as tg\n"
                   "def rnn_step(params, h, x_t):\n    raise NotImplementedError()\n")
    capsys.readouterr()
    result = shell.run_cell("tg.scan(lambda h, x: rnn_step(None, h, x), tg.zeros((3, 2)), "
                            "initializer=tg.zeros(2))")
    shown = capsys.readouterr().out
    assert isinstance(result.error_in_exec, NotImplementedError)
    assert "Not yet: write `rnn_step` in exercise 1 first" in shown, shown
    assert "Traceback" not in shown and len(shown.splitlines()) == 1, shown
    shell.run_cell("def other():\n    raise NotImplementedError('mine')\nother()")
    assert "Traceback" in capsys.readouterr().out     # any other stub: as before
