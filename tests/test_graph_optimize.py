"""Graph optimisation (issue 10, graph mode): each pass alone on small graphs, the
elementwise programs, then the pipeline end to end through tg.function.

Every pass must keep the results: bit for bit (assert_array_equal) for all of
them, since fused programs run the same ufuncs in the same order as the ops.
"""
import sys
import types

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from op_table import OPS, leaves

import teachgrad as tg
from teachgrad.graph.concrete import gradient_function
from teachgrad.graph.optimize import (
    GraphFunction,
    cse as cse_module,
    eliminate_common_subexpressions,
    fold_constants,
    fuse_elementwise,
    optimize,
    program as program_module,
    prune,
    reuse_buffers,
)
from teachgrad.graph.optimize.elementwise import build_program
from teachgrad.graph.optimize.program import ElementwiseProgram, Step, run_program

# The mean of an empty axis is NaN, which numpy announces (op-table cases include it).
pytestmark = pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning")

F64 = np.float64


def traced(build, *specs):
    """A GraphFunction: ``build`` applied to placeholders of ``specs`` [(shape, dtype)]."""
    g = tg.Graph()
    with g.as_default():
        xs = [tg.placeholder(dtype, shape, name=f"x{i}") for i, (shape, dtype) in enumerate(specs)]
        outs = build(*xs)
    return GraphFunction(g, xs, list(outs) if isinstance(outs, (list, tuple)) else [outs])


def run(fn, *arrays):
    return tg.Session(fn.graph).run(list(fn.outputs), dict(zip(fn.inputs, arrays)))


def ops(fn):
    return [node.op.name for node in fn.nodes]


def assert_same(before, after, *arrays):
    """``after`` computes bit for bit what ``before`` does, and leaves its inputs alone."""
    copies = [np.array(a, copy=True) for a in arrays]
    want = run(before, *arrays)
    got = run(after, *arrays)
    for w, g in zip(want, got):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)
    for a, c in zip(arrays, copies):
        np.testing.assert_array_equal(a, c)   # fed arrays are never written over


RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3))
Y = RNG.standard_normal((4, 3))


# -- prune ------------------------------------------------------------------------
def test_prune_drops_nodes_no_output_needs_and_keeps_every_placeholder():
    fn = traced(lambda x, y: [tg.exp(x) + 1.0, tg.sin(x) * 5.0][0],
                ((4, 3), F64), ((4, 3), F64))
    pruned = prune(fn)
    assert ops(fn) == ["placeholder", "placeholder", "exp", "const", "add", "sin", "const",
                       "multiply"]
    assert sorted(ops(pruned)) == sorted(["placeholder", "placeholder", "exp", "const", "add"])
    assert [p.name for p in pruned.inputs] == ["x0", "x1"]   # y is unused, still fed
    assert_same(fn, pruned, X, Y)
    assert len(fn.nodes) == 8                                  # the traced graph is untouched


# -- constant folding ----------------------------------------------------------------
def test_fold_replaces_a_chain_of_constant_nodes_by_one_constant():
    # The seed of a gradient: ones_like(loss) -> negative -> divide -> broadcast_to.
    def build(x):
        loss = tg.mean(x)
        seed = tg.broadcast_to(-tg.ones_like(loss) / 4.0, (4,))
        return x[:, 0] * seed
    fn = traced(build, ((4, 3), F64))
    folded = prune(fold_constants(fn))
    assert ops(folded).count("const") == 1
    for name in ("ones_like", "negative", "divide", "broadcast_to", "mean"):
        assert name not in ops(folded)
    const = next(n for n in folded.nodes if n.op.name == "const")
    assert const.name == "broadcast_to"                      # named after what it replaced
    np.testing.assert_array_equal(const.params["value"], [-0.25] * 4)
    assert_same(fn, folded, X)


def test_fold_never_runs_placeholders_variable_reads_or_calls():
    v = tg.Variable(np.ones(3), name="v")
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(F64, (3,), name="x")
        y = tg.exp(v) + tg.exp(x)
    fn = GraphFunction(g, [x], [y])
    folded = prune(fold_constants(fn))
    assert ops(folded).count("exp") == 2
    assert "read_variable" in ops(folded)
    v.assign(np.zeros(3))                                     # a later value is seen
    np.testing.assert_array_equal(run(folded, np.zeros(3))[0], [2.0, 2.0, 2.0])


def test_fold_respects_the_size_cap_and_leaves_failing_kernels_alone():
    def build(x):
        big = tg.exp(tg.zeros((64, 64)))                       # 32 KiB once folded
        bad = tg.log(tg.constant(0.0))                         # warns: left to run time
        return x + tg.sum(big), bad
    fn = traced(build, ((3,), F64))
    assert "exp" not in ops(fold_constants(fn))
    capped = fold_constants(fn, max_bytes=1024)
    assert "exp" in ops(capped) and "log" in ops(capped)
    with np.errstate(divide="ignore"):
        assert_same(fn, prune(capped), X[0])


def test_fold_treats_a_known_shape_as_constant_for_shape_only_ops():
    fn = traced(lambda x: x * tg.zeros_like(x) + tg.ones_like(x), ((2, 2), F64))
    folded = prune(fold_constants(fn))
    assert "zeros_like" not in ops(folded) and "ones_like" not in ops(folded)
    assert_same(fn, folded, np.ones((2, 2)))
    unknown = traced(lambda x: tg.ones_like(x), ((None, 2), F64))
    assert "ones_like" in ops(fold_constants(unknown))


def test_fold_leaves_ops_it_does_not_know_alone():
    calls = []
    op = tg.ops.primitive("counted", lambda x: calls.append(1) or x * 2)
    fn = traced(lambda x: x + tg.ops.bind(op, tg.constant(1.0)), ((), F64))
    folded = fold_constants(fn)
    assert "counted" in ops(folded) and calls == [1]          # the stand-in shape run only


# -- common-subexpression elimination -------------------------------------------------
def test_cse_merges_equal_nodes_and_equal_constants():
    fn = traced(lambda x: tg.exp(x) * 2.0 + tg.exp(x) * 2.0, ((4, 3), F64))
    merged = prune(eliminate_common_subexpressions(fn))
    assert ops(fn).count("exp") == 2 and ops(merged).count("exp") == 1
    assert ops(merged).count("multiply") == 1 and ops(merged).count("const") == 1
    assert_same(fn, merged, X)


def test_cse_compares_params_by_value_and_constants_by_bits():
    rows = np.array([0, 2])

    def build(x):
        a = x[rows.copy()] + x[rows.copy()]                    # equal index arrays: one getitem
        b = x[np.array([0, 1])]                                # a different one stays
        return a, b, x * 0.0 + x * -0.0                        # 0.0 and -0.0 are not merged
    fn = traced(build, ((4, 3), F64))
    merged = prune(eliminate_common_subexpressions(fn))
    assert ops(merged).count("getitem") == 2
    assert ops(merged).count("multiply") == 2
    assert_same(fn, merged, X)


def test_cse_never_merges_placeholders_or_control_flow_nodes():
    def build(x, y):
        loop = lambda: tg.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, h * 2.0),
                                     [tg.constant(0), x])[1]
        return loop() + loop() + x + y
    fn = traced(build, ((3,), F64), ((3,), F64))
    merged = prune(eliminate_common_subexpressions(fn))
    assert ops(merged).count("While") == 2 and ops(merged).count("placeholder") == 2
    assert_same(fn, merged, X[0], X[0])


def test_freeze_keys_values_exactly():
    freeze = cse_module.freeze
    assert freeze((1, 2.0, "a")) == freeze((1, 2.0, "a"))
    assert freeze(1) != freeze(1.0) != freeze(True)
    assert freeze(np.array([1.0, 2.0])) == freeze(np.array([1.0, 2.0]))
    assert freeze(np.array([1.0, 2.0])) != freeze(np.array([1.0, 2.0], np.float32))
    assert freeze(float("nan")) != freeze(float("nan"))
    big = np.zeros(cse_module.MAX_COMPARED_BYTES)
    assert freeze(big) == freeze(big) and freeze(big) != freeze(big.copy())
    marker = object()
    assert freeze({"f": marker}) == freeze({"f": marker}) != freeze({"f": object()})


# -- elementwise programs ---------------------------------------------------------------
def test_program_reuses_its_buffers_and_matches_the_ops_bit_for_bit():
    steps = [Step("add", [("in", 0), ("in", 1)], (4, 3), F64),
             Step("tanh", [("step", 0)], (4, 3), F64),
             Step("multiply", [("step", 1), ("num", 2.0)], (4, 3), F64)]
    program = ElementwiseProgram(steps, [((4, 3), F64), ((3,), F64)])
    assert program.formula == "tanh(x0 + x1) * 2.0"
    b = Y[0]
    out = program(X, b)
    np.testing.assert_array_equal(out, np.tanh(X + b) * 2.0)
    assert out is not X and out.base is None

    donating = program.with_donation(0)
    assert donating.describe() == "x0 := tanh(x0 + x1) * 2.0"
    x = X.copy()
    out = donating(x, b)
    assert out is x                                          # written into x0's buffer
    np.testing.assert_array_equal(out, np.tanh(X + b) * 2.0)
    readonly = np.broadcast_to(X, X.shape)                    # not writable: allocates
    assert donating(readonly, b) is not readonly


def test_program_formula_names_results_used_twice_and_keeps_evaluation_order():
    steps = [Step("tanh", [("in", 0)], (3,), F64),
             Step("multiply", [("step", 0), ("step", 0)], (3,), F64),
             Step("subtract", [("num", 1), ("step", 1)], (3,), F64),
             Step("add", [("in", 1), ("step", 2)], (3,), F64)]
    program = ElementwiseProgram(steps, [((3,), F64), ((3,), F64)])
    assert program.formula == "s0 = tanh(x0); x1 + (1 - s0 * s0)"


def test_gpu_code_runs_the_steps_under_cupy_fuse(monkeypatch):
    # No GPU here: a stand-in "cupy" with numpy's functions checks the wiring.
    fused = []
    fake = types.SimpleNamespace(fuse=lambda f: fused.append(f) or f,
                                 add=np.add, tanh=np.tanh, multiply=np.multiply)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    steps = [Step("add", [("in", 0), ("in", 1)], (4, 3), F64),
             Step("tanh", [("step", 0)], (4, 3), F64),
             Step("multiply", [("step", 1), ("num", 2.0)], (4, 3), F64)]
    run = program_module._gpu_code(ElementwiseProgram(steps, [((4, 3), F64), ((3,), F64)]))
    assert fused == [run]
    np.testing.assert_array_equal(run(X, Y[0]), np.tanh(X + Y[0]) * 2.0)


def test_build_program_from_nodes_covers_the_multi_step_recipes():
    def build(x, g):
        return tg.ops.tanh_grad(tg.tanh(x), g) + tg.sigmoid(x) + tg.relu(x) + \
            tg.where(x > 0, g, 0.0) + tg.ops.relu_grad(g, x - 0.5) + \
            tg.ops.sigmoid_grad(tg.sigmoid(x), g)
    fn = traced(build, ((4, 3), F64), ((4, 3), F64))
    nodes = [n for n in fn.nodes if n.op.name not in ("placeholder", "const")]
    program, inputs = build_program(nodes)
    assert [t.name for t in inputs][:2] == ["x0", "x1"]
    consts = [tg.Session(fn.graph).run(t) for t in inputs[2:]]
    np.testing.assert_array_equal(program(X, Y, *consts), run(fn, X, Y)[0])


def test_relu_gradient_fuses_into_one_program_with_a_bool_step():
    def loss(x, w):
        return tg.gradients(tg.sum(tg.relu(x * w) * 3.0), [w])[0]
    fn = traced(loss, ((4, 3), F64), ((4, 3), F64))
    after = optimize(fn)[0]
    assert "relu_grad" in ops(fn) and "relu_grad" not in ops(after)
    (program,) = [n.params["program"] for n in after.nodes if n.op.forward is run_program
                  and "> 0" in n.params["program"].formula]
    assert [s.dtype for s in program.steps if s.fn == "greater"] == [np.dtype(bool)]
    assert_same(fn, after, X - 0.2, Y)


def test_multi_step_recipes_need_inputs_of_the_output_dtype():
    # sigmoid of an int computes -x as an int before its float steps.
    fn = traced(lambda x: tg.sigmoid(x * 2) + 1.0, ((2, 3), np.int64))
    after = optimize(fn)[0]
    assert "sigmoid" in ops(after)
    assert_same(fn, after, np.arange(6).reshape(2, 3))


# -- fusion ------------------------------------------------------------------------
def test_fuse_turns_a_chain_into_one_node():
    fn = traced(lambda x, b: tg.tanh(x * 2.0 + b), ((4, 3), F64), ((3,), F64))
    fused = fuse_elementwise(fn)
    (node,) = [n for n in fused.nodes if n.op.forward is run_program]
    assert node.op.name == "fused: tanh(x0 * x1 + x2)"
    assert node.name == "tanh"
    assert [x.name for x in node.inputs] == ["x0", "Const", "x1"]
    assert len(fused.nodes) == 4
    assert_same(fn, fused, X, Y[0])


def test_fuse_stops_at_values_needed_elsewhere_and_at_other_ops():
    def build(x):
        e = tg.exp(x)
        s = tg.sum(e, axis=1, keepdims=True)                     # not elementwise
        return e * 3.0, tg.log(s) - 1.0, tg.sin(x) + tg.cos(x)
    fn = traced(build, ((4, 3), F64))
    fused = fuse_elementwise(fn)
    names = sorted(n.op.name for n in fused.nodes if n.op.forward is run_program)
    assert names == ["fused: log(x0) - x1", "fused: sin(x0) + cos(x0)"]
    assert "exp" in ops(fused) and "multiply" in ops(fused)      # e is returned: not fused
    assert_same(fn, fused, X)


# -- buffer reuse ------------------------------------------------------------------
def test_reuse_writes_into_a_dead_intermediate_but_never_into_a_fed_array():
    fn = traced(lambda x: tg.exp(x + 1.0) * 2.0, ((4, 3), F64))
    reused = reuse_buffers(fn)
    assert [n.op.name for n in reused.nodes if n.op.forward is run_program] == [
        "in place: x0 := exp(x0)", "in place: x0 := x0 * x1"]
    assert "add" in ops(reused)                                  # x is fed: never donated
    assert_same(fn, reused, X)


def test_reuse_waits_for_the_last_reader():
    def build(x):
        a = x * 2.0
        return a + tg.exp(a)            # exp reads a first: only the add may write over it
    fn = traced(build, ((4, 3), F64))
    reused = reuse_buffers(fn)
    assert [n.op.name for n in reused.nodes if n.op.forward is run_program] == [
        "in place: x0 := x0 + x1"]
    assert [x.name for x in reused.nodes[-1].inputs] == ["multiply", "exp"]
    assert_same(fn, reused, X)


def test_reuse_never_overwrites_outputs_views_or_constants():
    def build(x):
        a = x * 2.0
        view = tg.reshape(a, (12,))                              # a view of a's buffer
        c = x + 1.0                                              # c is returned
        k = tg.constant(np.ones((4, 3)))
        return view, a * 3.0, c, c * 2.0, k * 4.0
    fn = traced(build, ((4, 3), F64))
    reused = reuse_buffers(fn)
    assert not any(n.op.forward is run_program for n in reused.nodes)
    assert_same(fn, reused, X)


def test_reuse_needs_the_exact_shape_and_dtype():
    def build(x, row):
        return (row * 2.0) + x, tg.less(x * 2.0, 1.0)     # (3,) into (4, 3); f64 into bool
    fn = traced(build, ((4, 3), F64), ((3,), F64))
    reused = reuse_buffers(fn)
    assert not any(n.op.forward is run_program for n in reused.nodes)
    assert_same(fn, reused, X, Y[0])


# -- the pipeline ------------------------------------------------------------------
def mlp_step(params):
    """tanh MLP loss and its gradients, as in benchmarks/mlp_gradient.py."""
    def step(x, labels):
        h = x
        for W, b in zip(params[0:-2:2], params[1:-2:2]):
            h = tg.tanh(h @ W + b)
        logits = h @ params[-2] + params[-1]
        loss = -tg.mean(tg.log_softmax(logits)[np.arange(len(labels)), labels])
        return loss, tg.gradients(loss, params)
    return step


def make_mlp(dtype=F64, sizes=(5, 8, 8, 3), batch=6, seed=1):
    rng = np.random.default_rng(seed)
    params = []
    for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:])):
        params.append(tg.Variable(rng.standard_normal((m, n)).astype(dtype), name=f"W{i}"))
        params.append(tg.Variable(rng.standard_normal(n).astype(dtype), name=f"b{i}"))
    x = rng.standard_normal((batch, sizes[0])).astype(dtype)
    return params, x, tuple(int(v) for v in rng.integers(0, sizes[-1], batch))


def as_arrays(result):
    loss, grads = result
    return [loss.numpy()] + [g.numpy() for g in grads]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tg_function_optimised_gives_the_same_bits_as_traced(dtype):
    params, x, labels = make_mlp(dtype)
    before = [p.numpy().copy() for p in params]
    step = mlp_step(params)
    plain = tg.function(step, optimize=False)
    optimised = tg.function(step)
    for _ in range(2):   # the second call reuses the cached plan and programs
        for want, got in zip(as_arrays(plain(x, labels)), as_arrays(optimised(x, labels))):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    for p, b in zip(params, before):
        np.testing.assert_array_equal(p.numpy(), b)             # Variables untouched

    concrete = optimised.get_concrete_function(x, labels)
    report = concrete.optimized.report
    assert report.traced == len(concrete.graph.get_operations())
    assert report.counts()["reuse"] < report.traced
    nodes = concrete.optimized.graph.get_operations()
    assert [n.op.name for n in nodes].count("fused: x0 := tanh(x0 + x1)") == 2
    # Gradient nodes point to the forward nodes of the optimised graph (for drawing).
    assert all(n.grad_of is None or any(n.grad_of is m for m in nodes) for n in nodes)
    assert sum(n.grad_of is not None for n in nodes) >= 10
    assert not any(n.op.name.startswith(("fused", "in place"))
                   for n in concrete.graph.get_operations())      # the trace is as it was


def test_pipeline_runs_the_passes_asked_for_and_reports_node_counts():
    fn = traced(lambda x: tg.exp(x) * tg.exp(x) + tg.ones_like(x) * 2.0, ((4, 3), F64))
    after, report = optimize(fn, ("cse", "fold"))                # run in pipeline order
    assert [name for name, _ in report.steps] == ["prune", "fold", "cse", "prune"]
    assert report.traced == 8 and report.counts()["prune"] == len(after.nodes) == 5
    assert str(report).splitlines()[0] == "as traced        8 nodes"
    assert_same(fn, after, X)
    everything, _ = optimize(fn)
    assert ops(everything) == ["placeholder", "const", "fused: s0 = exp(x0); s0 * s0 + x1"]
    assert_same(fn, everything, X)


def test_a_second_derivative_shrinks_to_a_few_fused_nodes():
    def chain(x):
        h = x
        for _ in range(5):
            h = tg.tanh(h * 1.1 + 0.1)
        (g,) = tg.gradients(tg.sum(h * h), [x])
        return tg.gradients(tg.sum(g * g), [x])
    plain, optimised = tg.function(chain, optimize=False), tg.function(chain)
    np.testing.assert_array_equal(optimised(X)[0].numpy(), plain(X)[0].numpy())
    counts = optimised.get_concrete_function(X).optimized.report.counts()
    assert counts["traced"] > 80 and counts["cse"] < counts["traced"] - 10
    assert counts["reuse"] <= 6


def test_optimize_switch_decorator_forms_and_pass_names():
    @tg.function(optimize=False)
    def plain(x):
        return tg.exp(x) + tg.exp(x)

    @tg.function
    def default(x):
        return tg.exp(x) + tg.exp(x)

    only_cse = tg.function(lambda x: tg.exp(x) + tg.exp(x), optimize=("cse",))
    for f in (plain, default, only_cse):
        np.testing.assert_array_equal(f(X).numpy(), np.exp(X) + np.exp(X))
    assert plain.get_concrete_function(X)._optimized is None     # never made: never ran
    assert default.get_concrete_function(X)._optimized is not None
    cse_only = [n.op.name for n in only_cse.get_concrete_function(X).optimized.graph.nodes]
    assert cse_only == ["placeholder", "exp", "add"]
    # The "after" picture exists for an unoptimised function too (all passes).
    assert plain.get_concrete_function(X).optimized.report.counts()["cse"] == 3
    with pytest.raises(ValueError, match="Unknown optimisation pass 'fold_all'"):
        tg.function(lambda x: x, optimize=["fold_all"])


def test_optimized_function_draws():
    f = tg.function(lambda x, b: tg.tanh(x * 2.0 + b))
    concrete = f.get_concrete_function(X, Y[0])
    source = tg.viz.draw(concrete.optimized).source
    assert "fused: tanh(x0 * x1 + x2)" in source


def test_gradient_functions_are_optimised_like_their_function():
    hessians = {}
    for flag in (False, True):
        f = tg.function(lambda x: tg.sum(tg.tanh(x * 2.0) ** 2), optimize=flag)
        x = tg.constant(X)
        with tg.GradientTape() as outer:
            outer.watch(x)
            with tg.GradientTape() as tape:
                tape.watch(x)
                y = f(x)
            g = tape.gradient(y, x)
            s = tg.sum(g * g)
        hessians[flag] = outer.gradient(s, x).numpy()   # through the gradient's gradient
        t = np.tanh(2 * X)
        np.testing.assert_allclose(g.numpy(), 4 * t * (1 - t * t), rtol=1e-12)
        grad_fn = gradient_function(f.get_concrete_function(x))
        assert (grad_fn.optimize is not False) is flag
        assert (grad_fn._optimized is not None) is flag           # it ran optimised or not
        assert (gradient_function(grad_fn)._optimized is not None) is flag
    np.testing.assert_array_equal(hessians[True], hessians[False])


def test_optimised_control_flow_and_nested_functions_match_the_trace():
    W = tg.Variable(np.eye(3) * 0.9, name="W")
    inner = tg.function(lambda h: tg.tanh(h @ W) * 1.0)

    def body(x):
        i, h = tg.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, inner(h) + 0.5),
                             [tg.constant(0), x])
        y = tg.cond(tg.sum(h) > 0, lambda: tg.sum(tg.exp(h) * 2.0), lambda: tg.sum(h * h))
        return y, tg.gradients(y, [x, W])
    plain, optimised = tg.function(body, optimize=False), tg.function(body)
    for x in (X[:2], -X[:2] - 5):
        want, got = plain(x), optimised(x)
        np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())
        for w, g in zip(want[1], got[1]):
            np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_recompute_grad_is_not_merged_away():
    W = tg.Variable(np.eye(3) * 0.5, name="W")
    block = tg.recompute_grad(lambda h: tg.tanh(h @ W))

    @tg.function
    def f(x):
        y = tg.sum(block(x))
        return y, tg.gradients(y, [x, W])
    f(X)
    optimised = f.get_concrete_function(X).optimized.graph.get_operations()
    assert sum(n.op.name == "matmul" for n in optimised) == 4    # forward, recomputed, 2 VJPs


def test_debug_checks_see_the_graph_as_traced():
    f = tg.function(lambda x: tg.log(x * 2.0 - 1.0))
    f(np.ones(3))
    with pytest.raises(tg.debug.NumericsError, match="log"):
        with tg.debug.check_numerics():
            f(np.zeros(3))


# -- every op of the op table, with first and second derivatives ------------------------
SETTINGS = settings(max_examples=4, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def total(terms):
    """The float64 sum of scalar ``terms`` (add_n takes one dtype; some ops give float32)."""
    return tg.add_n([t if t.dtype == tg.float64 else tg.cast(t, tg.float64) for t in terms]
                    + [tg.constant(0.0)])


def outputs_and_derivatives(spec, case):
    """The op's outputs, the gradient of a nonlinear scalar of them, and the gradient
    of that gradient's squared norm: a forward, backward and second-order graph."""
    def body(*xs):
        outs = [o for o in leaves(spec.fn(*xs, **case.params)) if o.dtype.kind == "f"]
        y = total([tg.sum(tg.sin(o)) for o in outs])
        grads = [g.to_dense() if isinstance(g, tg.IndexedSlices) else g for g in
                 tg.gradients(y, list(xs), unconnected_gradients="zero")]
        norm = total([tg.sum(g * g) for g in grads])
        second = [g.to_dense() if isinstance(g, tg.IndexedSlices) else g for g in
                  tg.gradients(norm, list(xs), unconnected_gradients="zero")]
        return outs, grads, second
    return body


@pytest.mark.parametrize("spec", OPS, ids=lambda spec: spec.name)
@SETTINGS
@given(data=st.data())
def test_every_op_gives_the_same_bits_optimised(spec, data):
    case = data.draw(spec.inputs, label="case")
    body = outputs_and_derivatives(spec, case)
    plain, optimised = tg.function(body, optimize=False), tg.function(body)
    arrays = [np.asarray(a) for a in case.arrays]
    copies = [a.copy() for a in arrays]
    want, got = plain(*arrays), optimised(*arrays)
    for w, g in zip(tg.nest.flatten(want), tg.nest.flatten(got)):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g.numpy(), w.numpy(), err_msg=spec.name)
    for a, c in zip(arrays, copies):
        np.testing.assert_array_equal(a, c)


def test_defeffect_refuses_what_the_optimiser_could_misread():
    from teachgrad.ops.core.declare import defeffect, primitive
    op = primitive("scratch_op", lambda x: x)
    with pytest.raises(ValueError, match="effect"):
        defeffect(op, "pure")
    with pytest.raises(TypeError, match="elementwise"):
        defeffect(op, "fresh", elementwise=3)
    with pytest.raises(TypeError, match="shape_only_inputs"):
        defeffect(op, "fresh", shape_only_inputs=("x",))
    assert op.effect is None and defeffect(op, "fresh", elementwise="add").effect == "fresh"


def test_effects_are_pure_to_no_pass_and_kept_where_the_graph_runs_them():
    """A "stateful" op (tg.print, a draw) is never folded, merged or fused; pruning keeps it
    in a graph that runs its effects (a traced function's), not in a Session's Graph."""
    from teachgrad.graph.optimize import effects
    from teachgrad.ops.random.draws import STATEFUL
    assert not effects.is_pure(STATEFUL["normal"]) and effects.has_effect(STATEFUL["normal"])

    def build(x):
        tg.random.uniform([3], dtype=tg.float64)             # read by nobody
        a, b = tg.random.normal([3], dtype=tg.float64), tg.random.normal([3], dtype=tg.float64)
        return x * a + b

    session_graph = traced(build, ((3,), F64))
    assert [n.op.name for n in prune(session_graph).nodes].count("random_uniform") == 0
    function_graph = traced(build, ((3,), F64))
    function_graph.graph.runs_effects = True
    for step in (prune, fold_constants, eliminate_common_subexpressions, fuse_elementwise,
                 reuse_buffers):
        names = [n.op.name for n in step(function_graph).nodes]
        assert names.count("random_normal") == 2 and names.count("random_uniform") == 1, step
