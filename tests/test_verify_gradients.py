"""tg.debug.verify_gradients: every op's rules checked against finite differences as it runs."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from op_table import OPS

import teachgrad as tg
from teachgrad import backend
from teachgrad.debug import GradientRuleError, verify_gradients
from teachgrad.ops.core.apply import bind
from teachgrad.ops.core.declare import primitive
from teachgrad.ops.core.user_rules import defjvp, defvjp  # a user's rules: Tensors
from teachgrad.state import state

# The mean of an empty axis is NaN, which numpy (the op itself) announces.
pytestmark = pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning")

# A student's new op, registered with a deliberately wrong rule: d/dx sin x is cos x.
wrong_sin_p = primitive("wrong_sin", lambda x: backend.xp.sin(x))
defvjp(wrong_sin_p, lambda g, ans, x: g * tg.sin(x))


def wrong_sin(x):
    return bind(wrong_sin_p, x)


# Right VJP, wrong native JVP (the factor 2 is missing).
cube_p = primitive("cube", lambda x: x ** 3)
defvjp(cube_p, lambda g, ans, x: g * 3 * x * x)
defjvp(cube_p, lambda x_dot, ans, x: x_dot * 1.5 * x * x)


def cube(x):
    return bind(cube_p, x)


def model(w, x):
    hidden = tg.tanh(x @ w)
    return tg.sum(wrong_sin(hidden) ** 2)


def test_a_wrong_rule_inside_a_model_is_named_with_its_line():
    w = tg.Variable(np.linspace(-1, 1, 6).reshape(3, 2))
    x = tg.constant(np.arange(6.0).reshape(2, 3) / 6)
    with pytest.raises(GradientRuleError) as info:
        with verify_gradients():
            with tg.GradientTape() as tape:
                loss = model(w, x)
            tape.gradient(loss, w)
    check = info.value.check
    assert check.op == "wrong_sin" and check.wrong_rule == "VJP"
    assert check.source.function == "wrong_sin"
    assert "wrong_sin(hidden)" in check.source.caller.code      # where the model used it
    message = str(info.value)
    assert f"its VJP rule is defined at {__file__}" in message
    assert "first wrong entry: input 0, entry (0, 0)" in message
    (numbers,) = check.inputs
    assert numbers.vjp_verdict == "wrong"
    assert abs(numbers.vjp - numbers.numeric) > 1e-3


def test_a_wrong_native_jvp_is_caught_by_the_dot_product_identity():
    with pytest.raises(GradientRuleError) as info:
        with verify_gradients():
            cube(tg.constant([0.5, -1.0, 2.0]))
    check = info.value.check
    assert check.wrong_rule == "JVP"
    (numbers,) = check.inputs
    assert numbers.vjp_verdict == "ok" and numbers.jvp_verdict == "wrong"
    # <J t, u> from the JVP is half of <t, J^T u> from the VJP, which matches differences.
    assert numbers.jvp == pytest.approx(numbers.vjp / 2, rel=1e-9)
    assert numbers.vjp == pytest.approx(numbers.numeric, rel=1e-6)
    assert "output 0, entry (0,)" in check.entry


def test_report_mode_runs_on_and_lists_the_failures():
    x = tg.constant([0.3, 1.0])
    with verify_gradients(raise_on_failure=False) as report:
        with tg.GradientTape() as tape:
            tape.watch(x)
            y = tg.sum(wrong_sin(x) * tg.exp(x))
        tape.gradient(y, x)
    assert [c.op for c in report.failures] == ["wrong_sin"]
    assert {"exp", "multiply", "sum"} <= {c.op for c in report.passed}
    assert "1 wrong" in str(report) and "<table>" in report._repr_html_()


def test_kinks_are_skipped_with_a_note_not_blamed():
    with verify_gradients() as report:
        tg.relu(tg.constant([0.0, 1.0, -1.0]))
        tg.maximum(tg.constant([1.0, 2.0]), tg.constant([1.0, 3.0]))   # a tie at entry 0
        tg.abs(tg.constant([0.0, -2.0]))
    skipped = {c.op: c.note for c in report.skipped}
    assert "kink" in skipped["relu"] and "kink" in skipped["maximum"]
    assert not report.failures


def test_ops_without_derivatives_and_integer_inputs_are_not_checked():
    x = tg.constant([1.0, 2.0, 3.0])
    with verify_gradients() as report:
        x > 1.0
        tg.stop_gradient(x)
        tg.gather(x, tg.constant([2, 0]))          # the indices are integers
        tg.round(x)
    assert report.not_differentiable == {"greater": 1, "stop_gradient": 1, "round": 1}
    assert [c.op for c in report.passed] == ["gather"]
    assert [i.index for i in report.passed[0].inputs] == [0]


def test_domain_edges_are_skipped_not_blamed():
    with verify_gradients() as report:
        tg.log(tg.constant([1e-300, 2.0]))
        tg.sqrt(tg.constant([1e-12, 4.0]))
    assert not report.failures


def test_graph_runs_are_verified():
    graph = tg.Graph()
    with graph.as_default():
        x = tg.placeholder(tg.float64, (3,), name="x")
        y = tg.sum(wrong_sin(x) * x)
    with pytest.raises(GradientRuleError) as info:
        with verify_gradients():
            tg.Session(graph).run(y, {x: [0.1, 0.2, 0.3]})
    assert info.value.check.node == "wrong_sin"


def test_verification_is_invisible_to_tapes_recorders_and_graphs():
    x = tg.constant([0.4, -0.7])

    def run():
        with tg.viz.record() as rec:
            with tg.GradientTape(persistent=True) as tape:
                tape.watch(x)
                y = tg.sum(tg.tanh(x) * tg.sigmoid(x))
            g = tape.gradient(y, x)
        return g.numpy(), len(set(tape.recorded.producers.values())), len(rec.traces)

    plain = run()
    with verify_gradients():
        checked = run()
    np.testing.assert_allclose(plain[0], checked[0])
    assert plain[1:] == checked[1:]
    assert state.recorders == ()


def test_a_whole_mlp_step_passes():
    rng = np.random.default_rng(0)
    w1 = tg.Variable(rng.standard_normal((4, 5)))
    w2 = tg.Variable(rng.standard_normal((5, 3)))
    x = tg.constant(rng.standard_normal((6, 4)))
    labels = tg.constant(rng.integers(0, 3, 6))
    with verify_gradients() as report:
        with tg.GradientTape() as tape:
            logits = tg.relu(x @ w1) @ w2
            loss = -tg.mean(tg.gather(tg.log_softmax(logits, axis=-1), labels, axis=1))
        tape.gradient(loss, [w1, w2])
    assert not report.failures and len(report.passed) > 10


SETTINGS = settings(max_examples=8, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("spec", OPS, ids=lambda s: s.name)
def test_no_false_alarm_on_any_builtin_op(spec):
    """Every op of the op table, forward and backward, at hypothesis' inputs: no failure."""
    @SETTINGS
    @given(case=spec.inputs)
    def check(case):
        xs = [tg.constant(a) for a in case.arrays]
        with verify_gradients() as report:
            with tg.GradientTape() as tape:
                tape.watch(xs)
                out = spec.fn(*xs, **case.params)
                total = sum(tg.sum(o * o) for o in tg.nest.flatten(out)
                            if o.dtype.kind == "f")
            if isinstance(total, tg.Tensor):
                tape.gradient(total, xs)
        assert not report.failures, str(report)
    check()
