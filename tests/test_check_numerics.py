"""tg.debug.check_numerics: the first NaN or inf, forward or backward, names its op and line."""
import numpy as np
import pytest

import teachgrad as tg
from teachgrad.debug import NumericsError, check_numerics
from teachgrad.state import state


def _raises(fn):
    with pytest.raises(NumericsError) as info:
        with check_numerics():
            fn()
    return info.value


def test_log_of_zero_names_the_op_its_inputs_and_the_line():
    x = tg.constant([1.0, 0.0, 2.0])
    error = _raises(lambda: tg.log(x))
    assert error.phase == "forward" and error.node.op.name == "log"
    assert error.forward_node is None
    assert "tg.log(x)" in error.source.code          # the user's line, read back
    assert error.source.filename == __file__
    (summary,) = error.inputs
    assert summary.shape == (3,) and summary.min == 0 and summary.max == 2
    assert summary.nans == 0 and summary.zeros == 1
    assert error.outputs[0].infs == 1
    message = str(error)
    assert "log produced inf in the forward pass" in message
    assert "log(0) is -inf" in message and "min 0, max 2" in message


def test_zero_over_zero():
    zero = tg.constant([0.0, 1.0])
    error = _raises(lambda: zero / zero)
    assert error.node.op.name == "divide" and error.outputs[0].nans == 1
    assert "0 / 0 is NaN" in str(error)


def test_plain_log1pexp_at_100_overflows_in_exp():
    def log1pexp(x):
        return tg.log(1 + tg.exp(x))

    x = tg.constant(100.0, dtype=tg.float32)
    with pytest.raises(NumericsError) as info:
        with check_numerics():
            with tg.GradientTape() as tape:
                tape.watch(x)
                log1pexp(x)
    assert info.value.node.op.name == "exp" and info.value.phase == "forward"
    assert "88.72 in float32" in str(info.value)
    # A forward overflow is fixed by a stable form or a clipped input, not by a custom
    # gradient (that changes only the backward pass).
    why = str(info.value).splitlines()[-1]
    assert "stable form" in why and "tg.log1p" in why and "clip the input" in why
    assert "custom gradient" not in why and "custom_gradient" not in why
    assert info.value.source.function == "log1pexp"
    assert "log1pexp(x)" in info.value.source.caller.code   # the line that called it
    # In float64 exp(100) is finite: no error, and the gradient is 1.
    x64 = tg.constant(100.0)
    with check_numerics():
        with tg.GradientTape() as tape:
            tape.watch(x64)
            y = log1pexp(x64)
        assert tape.gradient(y, x64).numpy() == pytest.approx(1.0)


def test_nan_that_appears_only_in_the_backward_pass():
    x = tg.constant([0.0, 0.0])
    with pytest.raises(NumericsError) as info:
        with check_numerics():
            with tg.GradientTape() as tape:
                tape.watch(x)
                norm = tg.sqrt(tg.sum(x * x))    # 0: fine forward, infinite slope backward
            assert norm.numpy() == 0.0
            tape.gradient(norm, x)
    error = info.value
    assert error.phase == "backward"
    assert error.forward_node.op.name == "sqrt"
    assert "tape.gradient(norm, x)" in error.source.code
    assert "VJP rule of the forward op sqrt" in str(error)
    assert "tg.sqrt(tg.sum(x * x))" in str(error)       # the forward op's own line
    why = str(error).splitlines()[-1]                   # a backward fix, not a forward one
    assert "custom gradient" in why and "double-where" in why


def test_custom_grad_fn_that_makes_nan_is_named():
    @tg.custom_gradient
    def bad(x):
        def grad_fn(g):
            return g * tg.log(x - x)       # log(0) in the backward pass
        return x * 1.0, grad_fn

    x = tg.constant(2.0)
    with pytest.raises(NumericsError) as info:
        with check_numerics():
            with tg.GradientTape() as tape:
                tape.watch(x)
                y = bad(x)
            tape.gradient(y, x)
    assert info.value.phase == "backward"
    assert info.value.forward_node.op.name == "custom_gradient"
    assert "tg.log(x - x)" in info.value.source.code
    why = str(info.value).splitlines()[-1]
    assert "grad_fn of custom_gradient function bad" in why
    assert "give the function a custom gradient" not in why   # it has one already


def test_forward_hints_suggest_forward_fixes():
    zero = tg.constant([0.0, 1.0])
    for make in (lambda: tg.log(zero), lambda: tg.sqrt(zero - 1.0), lambda: 1.0 / zero,
                 lambda: tg.exp(tg.constant([1000.0])), lambda: tg.constant([1e308]) * 10.0):
        error = _raises(make)
        why = str(error).splitlines()[-1]
        assert error.phase == "forward" and why.startswith("  Why: ")
        assert "custom" not in why                   # no backward-pass remedy for a value
        assert any(w in why for w in ("clip", "stable form", "away from 0", "tg.maximum"))


def test_a_nan_from_outside_is_reported_as_passed_on():
    error = _raises(lambda: tg.exp(tg.constant([np.nan, 1.0])))
    assert error.inputs[0].nans == 1
    assert "already holds NaN" in str(error)


def test_graph_runs_are_checked_forward_and_backward():
    graph = tg.Graph()
    with check_numerics():
        with graph.as_default():
            x = tg.placeholder(tg.float64, (2,), name="x")
            y = tg.sqrt(x)
            (g,) = tg.gradients(y, [x])
        session = tg.Session(graph)
        with pytest.raises(NumericsError) as info:
            session.run(y, {x: [-1.0, 4.0]})
        assert info.value.node.op.name == "sqrt" and info.value.phase == "forward"
        assert "tg.sqrt(x)" in info.value.source.code
        with pytest.raises(NumericsError) as info:
            session.run(g, {x: [0.0, 4.0]})
        assert info.value.phase == "backward"
        assert info.value.forward_node.op.name == "sqrt"


def test_tg_function_bodies_are_checked():
    @tg.function
    def f(x):
        return tg.log(x)

    with pytest.raises(NumericsError) as info:
        with check_numerics():
            f(tg.constant([0.0, 1.0]))
    assert info.value.node.op.name == "log"


def test_off_costs_nothing_and_raises_nothing():
    assert state.checks() == ()
    y = tg.log(tg.constant([0.0]))          # -inf, silently, as numpy does
    assert np.isneginf(y.numpy()).all()
    with pytest.raises(NumericsError):
        with check_numerics():
            tg.log(tg.constant([0.0]))
    assert state.checks() == ()              # removed even after an error


def test_decorator_and_finite_runs():
    @check_numerics()
    def step(x):
        with tg.GradientTape() as tape:
            tape.watch(x)
            y = tg.sum(tg.tanh(x) ** 2)
        return tape.gradient(y, x)

    g = step(tg.constant([0.5, -1.0]))
    assert np.isfinite(g.numpy()).all()
    with pytest.raises(NumericsError):
        step(tg.constant([np.nan, 0.0]))
