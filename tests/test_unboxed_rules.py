"""One rule, two speeds (issue 21): every VJP rule runs on raw arrays when nothing
records the backward pass, and on Tensors when something does; both give the same
gradient.

The op table (tests/op_table.py) drives it, so an op added there is checked here
too. The Tensor run is forced by making the engine believe something records
(``engine._rules_take_arrays`` returning False), which is what a tape around the
gradient, a graph being built, a tg.debug check or a tg.viz recording do.
"""
import numpy as np
import pytest
import strategies as S
from hypothesis import HealthCheck, given, settings, strategies as st
from op_table import OPS, leaves

import teachgrad as tg
from teachgrad.autodiff import engine
from teachgrad.ops.core.op import Op

pytestmark = pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning")

SETTINGS = settings(max_examples=10, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: Ops whose rules call user code or run a graph: they always get Tensors
#: (per_example_while's builds the batch's backward loop, as While's does).
TENSOR_RULES = {"custom_gradient", "If", "While", "call", "per_example_while"}


def _gradients(tape, out, xs, cots, on_arrays):
    """``tape.gradient`` with the rules on arrays (the default) or forced onto Tensors."""
    if on_arrays:
        assert engine._rules_take_arrays(None), "something records: the pass would not " \
                                                "run on arrays"
        return tape.gradient(out, xs, output_gradients=cots)
    saved = engine._rules_take_arrays
    engine._rules_take_arrays = lambda observer: False
    try:
        return tape.gradient(out, xs, output_gradients=cots)
    finally:
        engine._rules_take_arrays = saved


def _comparable(g):
    if g is None:
        return None
    if isinstance(g, tg.IndexedSlices):
        return ("sparse", g.values.numpy(), tg.backend.to_numpy(g.indices), g.dense_shape)
    assert type(g) is tg.Tensor, f"a gradient came back as {type(g).__name__}, not a Tensor"
    return ("dense", g.numpy(), g.dtype)


@pytest.mark.parametrize("spec", OPS, ids=lambda spec: spec.name)
@SETTINGS
@given(data=st.data(), dtype=st.sampled_from([np.float64, np.float32]))
def test_every_rule_gives_the_same_gradient_on_arrays_and_on_tensors(spec, data, dtype):
    case = data.draw(spec.inputs, label="case")
    xs = [tg.constant(a, dtype=dtype) for a in case.arrays]
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(xs)
        out = spec.fn(*xs, **case.params)
    outs = [t for t in leaves(out) if t.dtype.kind == "f"]
    cots = [tg.constant(data.draw(S.arrays(tuple(t.shape), S.Domain(-2.0, 2.0)),
                                  label="cotangent"), dtype=t.dtype) for t in outs]
    for node in tape.recorded.producers.values():   # the table's ops really run on arrays
        if node.op.vjp_rules or node.op.vjp_all:
            assert node.op.array_rules or node.op.name in TENSOR_RULES, \
                f"{node.op.name}'s rules are not run on arrays"
    on_arrays = _gradients(tape, outs, xs, cots, True)
    on_tensors = _gradients(tape, outs, xs, cots, False)
    for a, t in zip(on_arrays, on_tensors):
        a, t = _comparable(a), _comparable(t)
        if a is None or t is None:
            assert a is t
            continue
        assert a[0] == t[0]
        if a[0] == "dense":
            assert a[2] == t[2], f"dtype {a[2]} on arrays, {t[2]} on Tensors"
            np.testing.assert_allclose(a[1], t[1], rtol=1e-12, atol=0)
        else:
            np.testing.assert_allclose(a[1], t[1], rtol=1e-12, atol=0)
            np.testing.assert_array_equal(a[2], t[2])
            assert a[3] == t[3]


def test_a_pass_nothing_records_runs_on_arrays_and_makes_no_tensor_per_rule_op():
    x = tg.constant(0.5)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(50):
            y = tg.tanh(y * 1.5) ** 2.0
    before = tg.constant(0.0).id
    g = tape.gradient(y, x)
    # The rules ran 150 ops; on Tensors each would have made at least one Tensor.
    assert g.id - before < 10
    assert isinstance(g, tg.Tensor)


def test_what_records_the_pass_sees_tensors():
    x = tg.constant([0.5, -1.0])
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tg.reduce_sum(tg.sigmoid(x) * x) if hasattr(tg, "reduce_sum") else \
            tg.sum(tg.sigmoid(x) * x)
    with tg.viz.record() as rec:
        g = tape.gradient(y, x)
    calls = [e for e in rec.traces[0].events if type(e).__name__ == "CallVJP"]
    assert calls
    for event in calls:
        for t in (*event.output_grads, *event.input_grads):
            assert t is None or isinstance(t, (tg.Tensor, tg.IndexedSlices))
    with tg.GradientTape() as outer:
        outer.watch(x)
        with tg.GradientTape() as inner:
            inner.watch(x)
            y = tg.sum(tg.sigmoid(x) * x)
        first = inner.gradient(y, x)   # recorded by `outer`: on Tensors
    second = outer.gradient(first, x)
    np.testing.assert_allclose(first.numpy(), g.numpy())
    s = 1 / (1 + np.exp(-x.numpy()))
    np.testing.assert_allclose(second.numpy(),
                               2 * s * (1 - s) + x.numpy() * s * (1 - s) * (1 - 2 * s))


def test_a_students_rule_gets_tensors():
    seen = []

    def rule(g, ans, x):
        seen.append((type(g), type(x)))
        return g * tg.constant(3 * x.numpy() ** 2)   # lesson 6's rule, which needs .numpy()

    cube_op = tg.ops.primitive("cube_for_test", lambda x: x ** 3)
    tg.ops.defvjp(cube_op, rule)
    assert not cube_op.array_rules
    x = tg.constant(2.0)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.sin(tg.ops.bind(cube_op, x))
    g = tape.gradient(y, x)
    np.testing.assert_allclose(g.numpy(), np.cos(8.0) * 12.0)
    assert seen == [(tg.Tensor, tg.Tensor)]


def test_ops_on_arrays_take_numbers_as_bind_does():
    x = np.float32(2.0)
    with tg.backend.using("numpy"), core_state(arrays=True):   # numpy arrays, numpy kernels
        y = tg.multiply(x, 3)
        z = tg.where(np.array([True, False]), np.ones(2, np.float32), 0)
    assert type(y) is np.float32 and y == 6
    assert type(z) is np.ndarray and z.dtype == np.float32


def core_state(**fields):
    from teachgrad.ops.core.apply import mode
    return mode(**fields)


def test_every_op_of_teachgrad_with_rules_runs_them_on_arrays_but_those_that_need_tensors():
    ops = [v for module in list(__import__("sys").modules.values())
           if getattr(module, "__name__", "").startswith("teachgrad.")
           for v in vars(module).values() if isinstance(v, Op)]
    assert ops
    for op in ops:
        if op.vjp_rules or op.vjp_all:
            assert op.array_rules == (op.name not in TENSOR_RULES), op.name


def test_who_declares_a_rule_says_whether_it_runs_on_arrays():
    """Whether a rule may run on arrays follows from who declares it, not from a flag:
    every op of teachgrad/ops with rules declares them with ``declare``'s verbs (on
    arrays), for its VJP and its native JVP; the verbs a user calls, ``tg.ops.defvjp``,
    ``defjvp`` and ``defvjp_all``, give Tensors, whatever the op declared before."""
    import importlib
    import pkgutil

    from teachgrad.ops.core import declare, user_rules
    undeclared = set()
    for info in pkgutil.walk_packages(tg.ops.__path__, "teachgrad.ops."):
        module = importlib.import_module(info.name)
        for op in vars(module).values():
            if not isinstance(op, Op):
                continue
            if (op.vjp_rules is not None or op.vjp_all is not None) and not op.array_rules:
                undeclared.add(f"{op.name} (VJP)")
    assert not undeclared, f"these rules do not run on arrays: {sorted(undeclared)}"
    public = (tg.ops.defvjp, tg.ops.defjvp, tg.ops.defvjp_all)
    assert public == (user_rules.defvjp, user_rules.defjvp, user_rules.defvjp_all)
    assert not set(public) & {declare.defvjp, declare.defjvp, declare.defvjp_all}
    mine = tg.ops.defvjp(tg.ops.primitive("mine", lambda x: x), lambda ct, ans, x: ct)
    assert not mine.array_rules
    both = tg.ops.defvjp_all(tg.ops.primitive("mine_all", lambda x: x), lambda ct, ans, x: [ct])
    assert not both.array_rules
    # Declared by teachgrad, then given a rule of a user's: the user's gets Tensors.
    again = declare.defjvp(declare.defvjp(tg.ops.primitive("again", lambda x: x),
                                          lambda ct, ans, x: ct), lambda t, ans, x: t)
    assert again.array_rules and again.array_jvp
    tg.ops.defvjp(again, lambda ct, ans, x: ct)
    tg.ops.defjvp(again, lambda t, ans, x: t)
    assert not again.array_rules and not again.array_jvp
