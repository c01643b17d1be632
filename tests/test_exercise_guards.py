"""The exercise checks against a student's worst: answers that try to fool them, code that
hangs, and results of every wrong shape (issue 30).

For each check, a table of plausible wrong answers must never be told "Right!", and
the right answer must be; student code that never returns is stopped with a message,
and the kernel (here: the test process) lives on.
"""
import collections
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import teachgrad as tg
from teachgrad import exercises as ex
from teachgrad.exercises import guard

POINT = [0.3, 1.2, -2.0]


@pytest.fixture
def short_limits(monkeypatch):
    monkeypatch.setattr(guard, "LIMITS", guard.Limits(rule=0.3, again=1.0, engine=0.3,
                                                      deep=1.0))


def _spin(*args):
    while True:
        try:
            time.sleep(0.001)
        except Exception:       # noqa: BLE001 -- a student's catch-all must not help
            pass


def _writes_into_x(g, ans, x):
    x.numpy()[...] = 0.0
    return g * tg.cos(x)


def _writes_into_g(g, ans, x):
    g.numpy()[...] = 0.0
    return g * tg.cos(x)


def _prints_megabytes(g, ans, x):
    print("x" * 3_000_000)
    return g * tg.sin(x)


WRONG_SIN_RULES = {
    "the function itself": lambda g, ans, x: g * tg.sin(x),
    "no cotangent": lambda g, ans, x: tg.cos(x),
    "a string": lambda g, ans, x: "g * cos(x)",
    "bytes": lambda g, ans, x: b"1",
    "a list of strings": lambda g, ans, x: ["1", "2", "3"],
    "(grad, None)": lambda g, ans, x: (g * tg.cos(x), None),
    "a 2-D result": lambda g, ans, x: tg.reshape(g * tg.cos(x), (3, 1)) * tg.ones((1, 3)),
    "None": lambda g, ans, x: None,
    "NaN": lambda g, ans, x: g * tg.cos(x) * np.nan,
    "inf": lambda g, ans, x: g * tg.cos(x) / 0.0,
    "a dict": lambda g, ans, x: {"x": g * tg.cos(x)},
    "a bool": lambda g, ans, x: True,
    "an object": lambda g, ans, x: object(),
    "raises": lambda g, ans, x: 1 / 0,
    "writes into x": _writes_into_x,
    "writes into g": _writes_into_g,
    "prints megabytes": _prints_megabytes,
    "never returns": _spin,
}


@pytest.mark.parametrize("kind", sorted(WRONG_SIN_RULES))
def test_check_vjp_never_passes_a_wrong_rule(kind, short_limits, capsys):
    feedback = ex.check_vjp(tg.sin, WRONG_SIN_RULES[kind], POINT)
    assert not feedback and str(feedback).startswith("Not yet: "), str(feedback)
    assert "Traceback" not in str(feedback)
    assert len(capsys.readouterr().out) < 20_000


def test_what_a_wrong_rule_is_told(short_limits):
    said = {kind: ex.check_vjp(tg.sin, rule, POINT) for kind, rule in WRONG_SIN_RULES.items()}
    assert said["a string"].verdict == "wrong_type" and "str" in said["a string"].message
    assert said["(grad, None)"].verdict == "wrong_type" and "2 values" in \
        said["(grad, None)"].message
    assert said["a 2-D result"].verdict == "wrong_shape"
    assert said["writes into x"].verdict == "raised" and "must not change its inputs" in \
        said["writes into x"].message
    assert said["NaN"].verdict == "wrong_value" and "NaN" in said["NaN"].message
    assert said["never returns"].verdict == "stopped" and "0.3 seconds" in \
        said["never returns"].message


@settings(max_examples=12, deadline=None, derandomize=True, database=None)
@given(point=st.lists(st.floats(-3, 3), min_size=1, max_size=4),
       kind=st.sampled_from(sorted(set(WRONG_SIN_RULES) - {"never returns",
                                                            "prints megabytes"})))
def test_at_any_point_the_right_rule_passes_and_the_wrong_ones_do_not(point, kind):
    assert ex.check_vjp(tg.sin, lambda g, ans, x: g * tg.cos(x), point)
    assert not ex.check_vjp(tg.sin, WRONG_SIN_RULES[kind], point)
    assert not ex.check_jvp(tg.sin, WRONG_SIN_RULES[kind], point)


@pytest.mark.parametrize("bad", [[0.3, np.nan], [0.3, np.inf], None, [], np.zeros((2, 0)),
                                 "1.0", b"1", ["1", "2"], [[0.3], None], True])
def test_a_point_that_compares_as_nothing_is_refused(bad):
    with pytest.raises((TypeError, ValueError), match="`inputs`"):
        ex.check_vjp(tg.sin, lambda g, ans, x: g, bad)


def test_the_checkers_point_is_untouched_by_a_rule_that_writes():
    point = np.array(POINT)
    ex.check_vjp(tg.sin, _writes_into_x, point)
    ex.check_jvp(tg.sin, _writes_into_x, point)
    assert (point == POINT).all()


# -- check_backward --------------------------------------------------------------------------

def _right_engine(target, sources, producer):
    """Pending counts (uses of each node's outputs), then a queue of the ready nodes."""
    counts, seen, todo = collections.Counter(), set(), [producer(target)]
    while todo:
        node = todo.pop()
        if node is not None and node not in seen:
            seen.add(node)
            parents = [producer(x) for x in node.inputs if producer(x) is not None]
            counts.update(parents)
            todo.extend(parents)
    grads, ready = {target.id: tg.ones_like(target)}, collections.deque([producer(target)])
    while ready:
        node = ready.popleft()
        ins = ex.call_rule(node, [grads.pop(t.id, None) for t in node.outputs])
        for x, g in zip(node.inputs, ins):
            if g is not None:
                grads[x.id] = grads[x.id] + g if x.id in grads else g
            parent = producer(x)
            if parent is not None:
                counts[parent] -= 1
                if counts[parent] == 0:
                    ready.append(parent)
    return [grads.get(s.id) for s in sources]


def _peeks(target, sources, producer):         # reads queue[0], never pops it
    queue = [producer(target)]
    while queue:
        ex.call_rule(queue[0], [tg.ones_like(target)])
    return []


def _returns(value):
    def engine(target, sources, producer):
        _right_engine(target, sources, producer)
        return value(sources)
    return engine


WRONG_ENGINES = {
    "reads queue[0] without popping": _peeks,
    "never returns": _spin,
    "strings": _returns(lambda sources: ["grad"] * len(sources)),
    "a string": _returns(lambda sources: "grad"),
    "None": _returns(lambda sources: None),
    "zeros": _returns(lambda sources: [tg.zeros_like(s) for s in sources]),
    "NaN": _returns(lambda sources: [s * np.nan for s in sources]),
    "the sources": _returns(lambda sources: list(sources)),
    "a dict": _returns(lambda sources: {s.name: s for s in sources}),
    "raises": lambda target, sources, producer: producer(None),
    "call_rule(None)": lambda target, sources, producer: ex.call_rule(None, []),
}


def test_check_backward_passes_the_right_engine():
    assert ex.check_backward(_right_engine)


@pytest.mark.parametrize("kind", sorted(WRONG_ENGINES))
def test_check_backward_never_passes_a_wrong_engine(kind, short_limits):
    feedback = ex.check_backward(WRONG_ENGINES[kind])
    assert not feedback and str(feedback).startswith("Not yet: "), str(feedback)


def test_an_engine_that_never_pops_is_stopped_by_its_steps_not_the_clock():
    start = time.monotonic()
    feedback = ex.check_backward(_peeks)
    assert time.monotonic() - start < 5
    assert "queue[0]" in feedback.message and "131 times" in feedback.message


def test_where_there_is_no_clock_the_step_budget_still_stops_an_engine():
    said = []
    worker = threading.Thread(target=lambda: said.append(ex.check_backward(_peeks)))
    worker.start()
    worker.join(30)
    assert said and "queue[0]" in said[0].message
    right = []
    worker = threading.Thread(target=lambda: right.append(ex.check_vjp(
        tg.sin, lambda g, ans, x: g * tg.cos(x), POINT)))
    worker.start()
    worker.join(30)
    assert right and right[0]


def test_the_protocol_refuses_what_is_not_a_node_or_a_function():
    with pytest.raises(TypeError, match="`node`"):
        ex.call_rule(None, [1.0])
    with pytest.raises(TypeError, match="`f`"):
        ex.record(lambda x: None, 1.0)
    run = ex.record(lambda x: tg.sin(x), 0.5)
    with pytest.raises(TypeError, match="`out_grads`"):
        ex.call_rule(run.producer(run.target), "g")


def test_a_test_alarm_outside_a_check_still_goes_off():
    import signal

    class Outer(Exception):
        pass

    def outer(signum, frame):
        raise Outer()
    previous = signal.signal(signal.SIGALRM, outer)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    try:
        with pytest.raises(Outer):
            with guard.time_limit(5.0, "the block"):
                while True:
                    pass
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with guard.time_limit(5.0, "a short block"):
            pass
        assert signal.getitimer(signal.ITIMER_REAL)[0] > 0      # the outer alarm is back
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- check_value, check_prediction, check_loss -------------------------------------------------

@pytest.mark.parametrize("got", ["2.0", b"2", ["2.0"], True, None, float("nan"), [2.0, None],
                                 {"x": 2.0}, {2.0}, float("inf"), [[2.0], [2.0, 1.0]]])
def test_check_value_never_passes_what_is_not_the_number(got):
    with pytest.raises(ex.NotYet) as said:
        ex.check_value(got, 2.0, about="the slope")
    assert "should be nan" not in str(said.value)
    assert ex.check_value(2.0, 2.0, about="the slope")
    assert ex.check_value(tg.constant(2.0), 2.0, about="the slope")


def test_check_value_refuses_an_expected_nan():
    with pytest.raises(ValueError, match="`expected`"):
        ex.check_value(float("nan"), float("nan"), about="the slope")


@pytest.mark.parametrize("predicted, actual", [
    (np.array([1, 2]), 3), (tg.constant([1.0, 2.0]), 3), ([[1]], {"a", "b"}),
    ({"a": np.array([1, 2])}, {"a": 1}), ("3", 3), (float("nan"), 3.0), (None, {"a": 1}),
    ({"a", "c"}, {"a", "b"}), ([1, 2], (1, 2, 3)), (True, 2)])
def test_check_prediction_says_not_yet_never_a_raw_error(predicted, actual):
    with pytest.raises(ex.NotYet):
        ex.check_prediction(predicted, actual, about="the counts")


def test_check_prediction_takes_tensors_and_arrays_as_numbers():
    assert ex.check_prediction(tg.constant(3), 3, about="the count")
    assert ex.check_prediction(np.array([1, 2]), [1, 2], about="the counts")
    assert ex.check_prediction({"a": np.int64(2)}, {"a": 2}, about="the counts")


@pytest.mark.parametrize("losses", [["1.0", "0.01"], [1.0, None], "0.01", [np.nan, 0.01], []])
def test_check_loss_never_passes_what_is_not_a_curve(losses):
    with pytest.raises(ex.NotYet):
        ex.check_loss(losses, below=0.1)


def test_a_rule_that_is_not_a_function_is_told_so():
    """A student's rule that is a number (a cell that assigned instead of defining) gets a
    verdict in words, not a TypeError (issue 39)."""
    feedback = ex.check_vjp(tg.sin, 3.0, POINT)
    assert feedback.verdict == "wrong_type" and "a float (3.0), not a function" in str(feedback)
    feedback = ex.check_vjp(tg.multiply, [lambda g, ans, x, y: g * y, "g * x"], [[1.0], [2.0]])
    assert feedback.verdict == "wrong_type" and "input 1 is a str" in str(feedback)


def test_a_big_array_is_said_in_words_not_shown():
    """check_value on 305 numbers: never a wall of numbers (issue 39)."""
    right = np.linspace(0.1, 3.0, 305)
    said = {}
    for name, got in {"zeros": np.zeros(305), "factor": 1.5 * right, "rows":
                      np.where(np.arange(305) // 61 == 3, 0.0, right)}.items():
        with pytest.raises(ex.NotYet) as caught:
            ex.check_value(got, right, about="your gradient")
        said[name] = str(caught.value)
        assert len(said[name]) < 300 and "0.1" not in said[name], said[name]
    assert "all zero" in said["zeros"] and "1.5 times" in said["factor"]
    rows = np.where((np.arange(40)[:, None] // 1 >= 3) & (np.arange(40)[:, None] <= 7), 0.0,
                    np.ones((40, 2)))
    with pytest.raises(ex.NotYet, match="rows 3-7 differ"):
        ex.check_value(rows, np.ones((40, 2)), about="the Jacobian")


def test_a_complex_result_is_refused_unless_the_check_asks_for_complex_values():
    from teachgrad.exercises.calls import tensor_result
    from teachgrad.exercises.lesson15 import FFT_VJP
    z = tg.constant([1 + 2j, -0.5j])
    with pytest.raises(ex.NotYet, match="holds complex128 values, not numbers"):
        tensor_result(FFT_VJP, z, "your result")
    got = tensor_result(FFT_VJP, z, "your result", (2,), complex_values=True)
    assert got.dtype == np.complex128 and np.array_equal(got, [1 + 2j, -0.5j])
    with pytest.raises(ex.NotYet, match=r"has shape \(2,\), but should have shape \(3,\)"):
        tensor_result(FFT_VJP, z, "your result", (3,), complex_values=True)
    with pytest.raises(ex.NotYet, match="holds bool values, not numbers \\(nor complex"):
        tensor_result(FFT_VJP, tg.constant([True]), "your result", complex_values=True)
