"""Every lesson exercise's check against the whole catalogue of foolers (issue 39).

Each lesson with a contract (``tg.exercises.contracts()``: all 15) runs here once, cell by
cell, as a kernel would, in this process. At each exercise's check cell the lesson's own solution is replaced in
turn by every fooler of the catalogue and the check cell runs, unchanged: an answer that
mutates its inputs, ignores them, is right on one example only, is off by a factor or a
transpose, returns NaN, None, a string, a list or a numpy array, raises, loops forever or
prints without end; the contract's own ``forbidden`` answers (the forbidden mode: a loop
where one vectorized call is asked for, reverse mode for forward); a stub of each earlier
exercise the check runs; for a prediction (a number, a word, a set, a list, a dict), a
wrong one of the same kind, a typo, None, a string, NaN, a number as text, a string where a
set is asked; for a value the student computes (lesson 4's graph tensors, lesson 7's ds/dx),
None, text, a factor or constant off, NaN. A fooler meant to change its inputs in place
that found none it could change (a float) is not counted: it is the solution. Every
one must fail, within its time budget, with a message in the teaching voice (no traceback,
no wall of numbers), and the solution and each of the contract's ``accepted`` answers must
pass. A new contract is covered without editing this file.
"""
import ast
import contextlib
import io
import json
import math
import pathlib
import re
import time

import numpy as np
import pytest

import teachgrad as tg
from teachgrad.exercises import guard
from teachgrad.exercises.lessons import contracts

# The lessons run here cell by cell, so their own packages (the `course` extra) are needed;
# the core-only runs (make test-oldest, test-newest) skip this file.
for _package in ("sklearn", "tqdm"):
    pytest.importorskip(_package, reason="the lessons' own packages: the course extra")
matplotlib = pytest.importorskip("matplotlib", reason="the lessons' own packages: the course "
                                 "extra")
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
    """Halve every array in ``value`` in place: through .numpy(), Variable.assign. True
    when there was one to halve (a float cannot be changed in place)."""
    if isinstance(value, tg.Variable):
        value.assign(value * 0.5)
    elif isinstance(value, tg.Tensor) and value.value is not None:
        before = value.numpy().copy()
        value.numpy()[...] *= 0.5
        return not np.array_equal(value.numpy(), before)   # a numpy scalar: a copy halved
    elif isinstance(value, np.ndarray) and value.flags.writeable and value.dtype.kind == "f":
        value *= 0.5
    elif isinstance(value, (list, tuple)):
        return any([_halve(v) for v in value])
    else:
        return False
    return True


def _first_only(t):
    if len(np.shape(t)) == 0 or np.shape(t)[0] < 2:
        return t * 2.0
    return tg.stack([t[0]] * t.shape[0]) if isinstance(t, tg.Tensor) else np.stack([t[0]] * len(t))


def _flip(t):
    if len(np.shape(t)) >= 2:
        return tg.transpose(t) if isinstance(t, tg.Tensor) else np.transpose(t)
    if len(np.shape(t)) == 1 and np.shape(t)[0] > 1:
        return tg.flip(t, (0,)) if isinstance(t, tg.Tensor) else np.flip(t, 0)
    return t - 1.0


def _numpy(t):
    return t.numpy() if isinstance(t, tg.Tensor) else np.asarray(t)


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
        mutates_then_answers.touched.append(_halve(a))
        return ref(*a, **k)

    def answers_then_mutates(*a, **k):
        out = ref(*a, **k)
        answers_then_mutates.touched.append(_halve(a))
        return out
    mutates_then_answers.touched, answers_then_mutates.touched = [], []

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
        "a list": changed(lambda t: np.atleast_1d(_numpy(t)).tolist()),
        "a numpy array": changed(_numpy),
        "raises": _raises,
        "loops forever": _spin,
        "prints without end": _prints,
        "not a function": 3.0,
    }


def _wrong(value, words):
    """``value`` (part of a prediction) made wrong, keeping its kind: another word, a count
    one higher, a number 1.5 times as big, a set with one member more or less."""
    if isinstance(value, str):
        return words[(words.index(value) + 1) % len(words)] if value in words \
            else value + "x"
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 1.5 + 1.0
    if isinstance(value, dict):
        key = sorted(value, key=str)[0]
        return type(value)({**value, key: _wrong(value[key], words)})
    if isinstance(value, (set, frozenset)):
        extra = [w for w in words if w not in value]
        return value | {extra[0]} if extra else set(list(value)[1:])
    if isinstance(value, (list, tuple)):
        return type(value)(reversed(value)) if len(set(map(str, value))) > 1 \
            else type(value)([_wrong(value[0], words)] + list(value[1:]))
    return value * 1.5 + 1.0


def _typo(value):
    """``value`` with the first word in it misspelt (its last letter dropped), else None."""
    if isinstance(value, str) and len(value) > 1:
        return value[:-1]
    if isinstance(value, dict):
        for key, v in value.items():
            if isinstance(v, str):
                return type(value)({**value, key: v[:-1]})
            if isinstance(key, str) and len(key) > 1:
                return type(value)({(k[:-1] if k == key else k): v for k, v in value.items()})
    if isinstance(value, (list, tuple, set, frozenset)) and value:
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else list(value)
        if isinstance(items[0], str):
            return type(value)([items[0] + "x"] + items[1:])
    return None


def _prediction_foolers(ref, words):
    """The catalogue for a prediction (a number, a word, a set, a list, a dict) ``ref``."""
    words = tuple(words) or tuple(w for w in (ref if isinstance(ref, (set, list, tuple, dict))
                                             else ()) if isinstance(w, str)) or ("yes", "no")
    made = {
        "wrong (a word, a count, a member)": _wrong(ref, words),
        "None": None,
        "a string": "the answer" if not isinstance(ref, str) else None,
        "NaN": math.nan if not isinstance(ref, str) else None,
    }
    if isinstance(ref, dict):
        made["the same value everywhere"] = type(ref)({k: _wrong(next(iter(ref.values())),
                                                                 words) for k in ref})
        made["a list of its values"] = list(ref.values())
    if isinstance(ref, (set, frozenset)):
        made["a string, not a set"] = sorted(ref)[0]
        made["every word"] = set(words) if set(words) != set(ref) else None
    if isinstance(ref, (list, tuple)):
        made["a set, not a list"] = set(ref)
    if isinstance(ref, (int, float)) and not isinstance(ref, bool):
        made["the number as text"] = str(ref)
        made["off by one"] = ref - 1
    typo = _typo(ref)
    if typo is not None:
        made["a typo"] = typo
    return {name: v for name, v in made.items() if v is not None or name == "None"}


def _value_foolers(ref):
    """The catalogue for a value the student computes (a number, a tensor)."""
    made = {"None": None, "a string": "the answer", "a list of strings": ["the answer"]}
    if isinstance(ref, (int, float, np.ndarray, np.generic)) or \
            (isinstance(ref, tg.Tensor) and ref.value is not None):
        made.update({"off by a factor of 1.5": _numpy(ref) * 1.5,
                     "off by a constant 0.1": _numpy(ref) + 0.1,
                     "NaN": _numpy(ref) * math.nan,
                     "the number as text": str(float(_numpy(ref)))
                     if np.size(_numpy(ref)) == 1 else None})
    else:
        made["a number, not a tensor of the graph"] = 1.0
    return {name: v for name, v in made.items() if v is not None or name == "None"}


def _foolers(contract, ns):
    """``{name: (value or None, source or None, words the message must name)}``."""
    ref = ns[contract.name]
    made = _prediction_foolers(ref, contract.words) if contract.kind == "prediction" \
        else _value_foolers(ref) if contract.kind == "value" else _function_foolers(ref)
    if contract.returns == "number":
        made.pop("a numpy array", None)     # numpy's numbers are numbers
    foolers = {name: (value, None, ()) for name, value in made.items()}
    if contract.words and "a typo" in made:
        foolers["a typo"] = (made["a typo"], None, contract.words)
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
    by_cell = {}
    for c in CONTRACTS:
        if c.lesson == number:
            by_cell.setdefault(c.cell, []).append(c)
    ns = {"__name__": "__main__", "display": lambda *shown: None}   # as a kernel has
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        for contract in by_cell.get(grade_id, []):
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
        verdict = _verdict(error, printed, seconds, words)
        if verdict == "passed" and getattr(value, "touched", None) is not None \
                and not any(value.touched):
            verdict = None      # its inputs are numbers: nothing it could change in place
        verdicts[name] = (verdict, str(error)[:300] if error is not None else "")
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
    # short budgets: a fooler that loops or prints without end costs one of them, at
    # each of the 41 exercises; the solutions need a small part of them
    short = guard.Limits(rule=0.5, again=4.0, answer=1.0, engine=0.5, deep=4.0)
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


def _fetched(source):
    """``{name: expect}`` of each ``tg.exercises.answer(name, expect=...)`` in ``source``
    (a name in a loop: each of the loop's names)."""
    fetched = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "answer":
            expect = next(ast.literal_eval(k.value) for k in node.keywords if k.arg == "expect")
            names = [node.args[0].value] if isinstance(node.args[0], ast.Constant) else \
                [n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Tuple)
                 for n in n.elts if isinstance(n, ast.Constant)]
            fetched.update(dict.fromkeys(names, expect))
    return fetched


def test_a_check_cell_fetches_each_answer_as_its_contract_says():
    """A check cell of its own (``check`` None) fetches each of its contracts' answers with
    the contract's ``expect``: that is how ``answer`` knows the contract applies."""
    for contract in (c for c in CONTRACTS if c.check is None):
        cells = json.loads(_lesson_path(contract.lesson).read_text())["cells"]
        source = next("".join(c["source"]) for c in cells if c.get("metadata", {}).get(
            "nbgrader", {}).get("grade_id") == contract.cell)
        assert _fetched(source).get(contract.name) == contract.expect, contract


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
