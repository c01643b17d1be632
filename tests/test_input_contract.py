"""The input contract (issue 17): every public entry point says what is wrong with
its arguments, and nothing returns a silently wrong number.

One test per class of failure the issue lists; each names the argument it
expects the message to name.
"""
import warnings

import numpy as np
import pytest

import teachgrad as tg


def _gradient(f, x):
    x = tg.constant(x)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.gradient(y, x)


# -- None never becomes NaN ---------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: tg.constant(None),
    lambda: tg.constant(None, dtype=tg.float64),
    lambda: tg.constant([1.0, None]),
    lambda: tg.constant([[1.0], [None]], dtype=tg.float32),
    lambda: tg.Variable(None),
    lambda: tg.Variable(1.0).assign(None),
    lambda: tg.Variable([1.0, 2.0]).assign([1.0, None]),
    lambda: tg.Variable(1.0).assign_add(None),
])
def test_none_is_refused_not_made_nan(make):
    with pytest.raises(TypeError, match="None"):
        make()


def test_none_inside_output_gradients_is_refused():
    x = tg.constant([1.0, 2.0])
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(TypeError, match="output_gradients"):
        tape.gradient(y, x, output_gradients=[1.0, None])


def test_a_list_of_one_none_is_the_default_cotangent():
    x = tg.constant(2.0)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert tape.gradient(y, x, output_gradients=[None]).numpy() == 4.0


def test_none_tangents_are_refused():
    x = tg.constant(2.0)
    with pytest.raises(TypeError, match="tangents"):
        tg.jvp(lambda a: a * a, (x,), (None,))
    with pytest.raises(TypeError, match="tangents"):
        tg.hvp(lambda a: a * a, (x,), (None,))
    with pytest.raises(TypeError, match="tangents"):
        tg.ForwardAccumulator(x, None)


def test_a_none_feed_is_refused():
    g = tg.Graph()
    with g.as_default():
        p = tg.placeholder(tg.float64, shape=(), name="p")
        y = p * 2
    with pytest.raises(TypeError, match="feed_dict"):
        tg.Session(g).run(y, {p: None})


# -- the trace cache keeps Python values apart by type -------------------------------------

def test_true_one_and_one_point_oh_trace_apart():
    @tg.function
    def f(a, flag):
        return a * 2 if flag is True else a * 3
    x = tg.constant(1.0)
    assert f(x, True).numpy() == 2.0
    assert f(x, 1).numpy() == 3.0
    assert f(x, 1.0).numpy() == 3.0
    assert f.trace_count == 3


def test_types_are_kept_apart_inside_tuples_too():
    @tg.function
    def f(a, flags):
        return a * 2 if flags[1] is True else a * 3
    x = tg.constant(1.0)   # (a tuple of numbers alone would be a tensor argument)
    assert f(x, ("mode", True)).numpy() == 2.0
    assert f(x, ("mode", 1)).numpy() == 3.0


def test_keyword_arguments_and_defaults_share_one_trace():
    @tg.function
    def f(a, b=2.0):
        return a * b
    x = tg.constant(1.0)
    assert f(x, b=3.0).numpy() == 3.0
    assert f(x, 3.0).numpy() == 3.0
    assert f(x).numpy() == 2.0
    assert f(x, b=2.0).numpy() == 2.0
    assert f.trace_count == 2
    assert f(a=x, b=tg.constant(5.0)).numpy() == 5.0   # a tensor keyword: a placeholder


def test_a_wrong_call_names_the_function_and_its_parameters():
    @tg.function
    def f(a, b):
        return a * b
    with pytest.raises(TypeError, match=r"f\(a, b\).*'b'"):
        f(tg.constant(1.0))


def test_retracing_warns_once_and_says_to_pass_a_tensor():
    @tg.function
    def f(a, s):
        return a * s
    x = tg.constant(1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(10):
            f(x, float(i))
    messages = [str(w.message) for w in caught if "traced" in str(w.message)]
    assert len(messages) == 1 and "tg.constant" in messages[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(10):
            f(x, tg.constant(float(i)))   # one more trace, then none


# -- no silent casts ------------------------------------------------------------------------

def test_assigning_floats_to_an_integer_variable_is_refused():
    v = tg.Variable(3)
    with pytest.raises(TypeError, match="value.*int64"):
        v.assign(2.7)
    with pytest.raises(TypeError, match="delta"):
        v.assign_add(0.5)
    assert v.numpy() == 3
    v.assign(4)
    assert v.numpy() == 4


def test_assigning_lower_precision_of_the_same_kind_converts():
    v = tg.Variable(np.float32(1.0))
    v.assign(2.5)
    assert v.dtype == tg.float32 and v.numpy() == 2.5
    w = tg.Variable(1.0)
    w.assign(2)   # an int into a float Variable loses nothing
    assert w.numpy() == 2.0


@pytest.mark.parametrize("make", [
    lambda: tg.constant(np.array([1 + 2j]), dtype=tg.float64),
    lambda: tg.constant(1 + 2j, dtype="float32"),
    lambda: tg.Variable(1.0).assign(1 + 2j),
    lambda: tg.Variable(np.array([1j]), dtype=tg.float64),
])
def test_complex_values_that_would_lose_their_imaginary_part_are_refused(make):
    with pytest.raises(TypeError, match="imaginary|real|dtype"):
        make()


def test_complex_values_and_dtypes_are_accepted():
    assert tg.constant(1 + 2j).dtype == tg.complex128
    assert tg.constant(np.array([1 + 2j], np.complex64)).dtype == tg.complex64
    assert tg.cast(tg.constant(1.0), "complex64").dtype == tg.complex64
    assert tg.zeros((2,), dtype=complex).dtype == tg.complex128


# -- contracts that are checked -------------------------------------------------------------

def _tape_gradient_of(f, x=2.0):
    return _gradient(f, x)


def test_custom_gradient_numbers_and_arrays_become_tensors():
    @tg.custom_gradient
    def f(a):
        return a * a, lambda ct: 2.0
    @tg.custom_gradient
    def g(a):
        return a * a, lambda ct: np.array(3.0)
    for fn, expected in ((f, 2.0), (g, 3.0)):
        grad = _tape_gradient_of(fn)
        assert isinstance(grad, tg.Tensor) and grad.numpy() == expected


def test_custom_gradient_without_a_grad_fn_says_so():
    @tg.custom_gradient
    def f(a):
        return a * a
    with pytest.raises(TypeError, match="grad_fn"):
        _tape_gradient_of(f)
    @tg.custom_gradient
    def g(a):   # a 2-vector would unpack into (y, grad_fn) without the check
        return tg.stack([a, a])
    with pytest.raises(TypeError, match="grad_fn"):
        _tape_gradient_of(g)


def test_custom_gradient_with_the_wrong_number_of_gradients():
    @tg.custom_gradient
    def f(a):
        return a * a, lambda ct: (ct, ct)
    with pytest.raises(ValueError, match="1 gradients, but returned 2"):
        _tape_gradient_of(f)


def test_custom_gradient_returning_none_as_a_gradient():
    @tg.custom_gradient
    def f(a):
        return a * a, lambda ct: [None]
    assert _tape_gradient_of(f) is None


def test_a_cond_branch_returning_none_in_a_graph():
    g = tg.Graph()
    with g.as_default():
        p = tg.placeholder(tg.bool_, shape=())
        x = tg.placeholder(tg.float64, shape=())
        with pytest.raises(ValueError, match="true_fn returned None"):
            tg.cond(p, lambda: None, lambda: x)
        with pytest.raises(ValueError, match="false_fn returned None"):
            tg.cond(p, lambda: x, lambda: None)
        with pytest.raises(TypeError, match="None"):
            tg.cond(p, lambda: [x, None], lambda: [x, x])


def test_feed_dict_given_as_a_list():
    g = tg.Graph()
    with g.as_default():
        p = tg.placeholder(tg.float64, shape=())
        y = p * 2
    with pytest.raises(TypeError, match="feed_dict.*dict"):
        tg.Session(g).run(y, feed_dict=[(p, 1.0)])


def test_a_placeholder_with_a_minus_one_dimension():
    with tg.Graph().as_default():
        with pytest.raises(ValueError, match="shape.*None, not -1"):
            tg.placeholder(tg.float64, shape=(-1, 2))
        with pytest.raises(TypeError, match="shape"):
            tg.placeholder(tg.float64, shape="2")
        with pytest.raises(TypeError, match="dtype"):
            tg.placeholder(None, shape=(2,))


@pytest.mark.parametrize("call, name", [
    (lambda x: tg.sum(x, axis=5), "axis"),
    (lambda x: tg.mean(x, axis=-3), "axis"),
    (lambda x: tg.sum(x, axis="0"), "axis"),
    (lambda x: tg.max(x, axis=1.0), "axis"),
    (lambda x: tg.sum(x, axis=True), "axis"),
    (lambda x: tg.reshape(x, "4"), "shape"),
    (lambda x: tg.reshape(x, (2.0, 2)), "shape"),
    (lambda x: tg.broadcast_to(x, "22"), "shape"),
    (lambda x: tg.zeros("3"), "shape"),
    (lambda x: tg.ones((-1,)), "shape"),
    (lambda x: tg.split(x, 2.0), "num_or_size_splits"),
    (lambda x: tg.split(x, "2"), "num_or_size_splits"),
    (lambda x: tg.split(x, 0), "num_or_size_splits"),
    (lambda x: tg.split(x, 2, axis="0"), "axis"),
    (lambda x: tg.concat(x, axis=0), "values"),
    (lambda x: tg.stack([x, x], axis="1"), "axis"),
    (lambda x: tg.transpose(x, axes=1), "axes"),
    (lambda x: tg.squeeze(x, axis="0"), "axis"),
    (lambda x: tg.grad(lambda a: a * a, argnums="0")(x), "argnums"),
    (lambda x: tg.cast(x, None), "dtype"),
    (lambda x: tg.cast(x, "not a dtype"), "dtype"),
    (lambda x: tg.exp(None), "x"),
    (lambda x: tg.add(x, "a"), "y"),
    (lambda x: tg.cond("yes", lambda: x, lambda: x), "pred"),
    (lambda x: tg.while_loop(lambda i: i < 3, lambda i: i + 1, [x], maximum_iterations="3"),
     "maximum_iterations"),
    (lambda x: tg.while_loop(lambda i: i < 3, lambda i: None, [tg.constant(0.0)]),
     "the body's result"),
])
def test_bad_arguments_are_named(call, name):
    x = tg.constant([1.0, 2.0, 3.0, 4.0])
    with pytest.raises((TypeError, ValueError)) as info:
        call(x)
    assert f"`{name}`" in str(info.value), str(info.value)


def test_acc_jvp_of_a_non_tensor():
    x = tg.constant(1.0)
    with tg.ForwardAccumulator(x, tg.constant(1.0)) as acc:
        x * x
    with pytest.raises(TypeError, match="primals"):
        acc.jvp(3.0)


def test_unconnected_gradients_is_checked_everywhere():
    x = tg.constant(1.0)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(ValueError, match="unconnected_gradients"):
        tape.gradient(y, x, unconnected_gradients="zeros")
    with tg.ForwardAccumulator(x, tg.constant(1.0)) as acc:
        y = x * x
    with pytest.raises(ValueError, match="unconnected_gradients"):
        acc.jvp(y, unconnected_gradients=None)


# -- right numbers at the edges --------------------------------------------------------------

def test_power_zero_has_gradient_zero_at_zero():
    with np.errstate(all="ignore"):
        assert _gradient(lambda x: x ** 0.0, 0.0).numpy() == 0.0
        assert tg.grad(tg.grad(lambda a: a ** 1.0))(0.0).numpy() == 0.0
        assert tg.grad(lambda a: a ** 0.0)(np.float32(0.0)).numpy() == 0.0
    assert tg.grad(lambda a: a ** 3.0)(2.0).numpy() == 12.0
    assert tg.grad(tg.grad(lambda a: a ** 2.0))(0.0).numpy() == 2.0


@pytest.mark.parametrize("reduce", [tg.sum, tg.mean, tg.max, tg.min, tg.logsumexp])
def test_reductions_take_a_list_of_tensors(reduce):
    values = [tg.constant(1.0), tg.constant(2.0)]
    expected = {tg.sum: 3.0, tg.mean: 1.5, tg.max: 2.0, tg.min: 1.0,
                tg.logsumexp: np.logaddexp(1.0, 2.0)}[reduce]
    np.testing.assert_allclose(reduce(values).numpy(), expected)


def test_a_python_constant_output_differentiates_to_zero():
    x = tg.constant(1.0)
    assert tg.grad(lambda a: 3.0)(x).numpy() == 0.0
    assert tg.jacfwd(lambda a: 3.0)(x).numpy() == 0.0
    assert tg.jacrev(lambda a: 3.0)(x).numpy() == 0.0
    out, tangent = tg.jvp(lambda a: (a * 2, 3.0), (x,), (tg.constant(1.0),))
    assert tangent[0].numpy() == 2.0 and tangent[1].numpy() == 0.0


def test_gradient_of_a_variable_with_respect_to_itself_is_one():
    v = tg.Variable([2.0, 3.0])
    with tg.GradientTape() as tape:
        y = v * 1.0
    np.testing.assert_array_equal(tape.gradient(v, v).numpy(), [1.0, 1.0])
    w = tg.Variable(2.0)
    with tg.GradientTape() as tape:
        tape.watch(w)
    assert tape.gradient(w, w).numpy() == 1.0


def test_name_scope_keeps_every_part_of_its_name():
    g = tg.Graph()
    with g.as_default():
        with tg.name_scope("layer/one"):
            c = tg.constant(1.0, name="c")
        with tg.name_scope("outer"):
            with tg.name_scope("layer/one"):
                d = tg.constant(1.0, name="d")
        with pytest.raises(TypeError, match="name"):
            with tg.name_scope(3):
                pass
    assert c.name == "layer/one/c"
    assert d.name == "outer/layer/one/d"


# -- verify_gradients checks custom gradients -------------------------------------------------

def _exp_with_grad(factor):
    @tg.custom_gradient
    def my_exp(x):
        y = tg.exp(x)
        def grad_fn(ct):
            return ct * factor * y   # the grad_fn line the report points to
        return y, grad_fn
    return my_exp


def _differentiate_under_verify(f, **options):
    x = tg.constant([0.5, 1.0])
    with tg.debug.verify_gradients(custom_gradients=True, **options) as report:
        with tg.GradientTape() as tape:
            tape.watch(x)
            z = tg.sum(f(x))
        tape.gradient(z, x)
    return report


def test_verify_gradients_reports_a_wrong_custom_gradient_with_its_lines():
    with pytest.raises(tg.debug.GradientRuleError) as info:
        _differentiate_under_verify(_exp_with_grad(2.0))
    message = str(info.value)
    assert "custom_gradient" in message and "grad_fn" in message
    with open(__file__) as source:
        lines = source.read().splitlines()
    def_line = lines.index("        def grad_fn(ct):") + 1
    assert f"{__file__}:{def_line}" in message   # where the grad_fn is written
    assert "z = tg.sum(f(x))" in message          # and the line that made the op


def test_verify_gradients_passes_a_right_custom_gradient():
    report = _differentiate_under_verify(_exp_with_grad(1.0), raise_on_failure=False)
    assert not report.failures
    assert any(c.op == "custom_gradient" and c.status == "ok" for c in report.checks)


def test_verify_gradients_checks_custom_gradients_unless_told_not_to():
    x = tg.constant([0.5, 1.0])
    with tg.debug.verify_gradients(raise_on_failure=False) as report:
        with tg.GradientTape() as tape:
            tape.watch(x)
            z = tg.sum(_exp_with_grad(2.0)(x))
        tape.gradient(z, x)
    assert [c.op for c in report.failures] == ["custom_gradient"]
    with tg.debug.verify_gradients(raise_on_failure=False, custom_gradients=False) as report:
        with tg.GradientTape() as tape:
            tape.watch(x)
            z = tg.sum(_exp_with_grad(2.0)(x))
        tape.gradient(z, x)
    (skipped,) = report.skipped
    assert skipped.op == "custom_gradient" and "tg.gradcheck" in skipped.note


def test_verify_gradients_leaves_grad_pass_through_alone():
    report = _differentiate_under_verify(tg.grad_pass_through(tg.round),
                                         raise_on_failure=False)
    assert not report.failures
    assert any(c.op == "custom_gradient" and c.status == "skipped" for c in report.checks)


def test_verify_gradients_checks_recompute_grad():
    report = _differentiate_under_verify(tg.recompute_grad(lambda a: tg.sin(a) * a),
                                         raise_on_failure=False)
    assert not report.failures
    assert any(c.op == "custom_gradient" and c.status == "ok" for c in report.checks)


# -- a None gradient from a usual slip says why, once, in a warning ----------------------------

@pytest.fixture(autouse=False)
def explain_none():
    assert tg.GradientTape.explain_none, "on by default: a None from a slip says why"


def test_a_tape_never_entered_says_so(explain_none):
    x = tg.constant(3.0)
    tape = tg.GradientTape()
    y = x * x
    with pytest.warns(UserWarning, match="never entered"):
        assert tape.gradient(y, x) is None


def test_a_forgotten_watch_says_so(explain_none):
    x = tg.constant(3.0)
    with tg.GradientTape() as tape:
        y = x * x
    with pytest.warns(UserWarning, match=r"does not watch it.*tape.watch"):
        assert tape.gradient(y, x) is None


def test_an_integer_variable_says_so(explain_none):
    v = tg.Variable(3)
    with tg.GradientTape() as tape:
        y = v * 2
    with pytest.warns(UserWarning, match="int64.*floating-point"):
        assert tape.gradient(y, v) is None


def test_an_untrainable_variable_says_so(explain_none):
    v = tg.Variable(3.0, trainable=False)
    with tg.GradientTape() as tape:
        y = v * 2
    with pytest.warns(UserWarning, match="trainable=False.*tape.watch"):
        assert tape.gradient(y, v) is None


def test_a_tape_that_watches_no_read_variable_says_so(explain_none):
    v = tg.Variable(3.0)
    with tg.GradientTape(watch_accessed_variables=False) as tape:
        y = v * 2
    with pytest.warns(UserWarning, match="watch_accessed_variables=False"):
        assert tape.gradient(y, v) is None


def test_an_unused_variable_is_not_a_slip(explain_none):
    a, unused = tg.Variable(2.0), tg.Variable(1.0)
    with tg.GradientTape() as tape:
        y = a * a
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tape.gradient(y, [a, unused])[1] is None


def test_an_unconnected_watched_source_is_not_a_slip(explain_none):
    x, z = tg.constant(3.0), tg.constant(1.0)
    with tg.GradientTape() as tape:
        tape.watch([x, z])
        y = x * x
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tape.gradient(y, z) is None


# -- drawings shorten what Graphviz could not take ---------------------------------------------

def test_a_name_longer_than_graphviz_takes_is_drawn_shortened():
    long_name = "layer" * 5000   # 25,000 characters: past Graphviz's 16384 for a label
    x = tg.constant(1.0, name=long_name)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    svg = tg.viz.draw(y, tape=tape).pipe(format="svg").decode()
    assert "\u2026" in svg and long_name not in svg
    g = tg.Graph()
    with g.as_default():
        p = tg.placeholder(tg.float64, shape=(), name=long_name)
        p * 2.0
    assert "\u2026" in tg.viz.draw(g).pipe(format="svg").decode()
    with tg.viz.record() as rec:
        with tg.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        tape.gradient(y, x)
    stepper = tg.viz.BackpropStepper(rec.traces[0])
    assert "\u2026" in stepper.graph_html("s")


# -- explain_gradient names a value taken out of the tape ---------------------------------------

def test_explain_gradient_after_numpy_inside_the_tape_names_the_cut():
    x = tg.constant(2.0)
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = x * x
        y = tg.constant(h.numpy()) * 3.0    # the value of h leaves the tape here
    explanation = tg.explain_gradient(y, x, tape)
    first = str(explanation).splitlines()[1]
    assert "Why:" in first and ".numpy()" in first and "multiply" in first


def test_a_variance_with_no_degrees_of_freedom_left_is_refused_naming_ddof():
    # n - ddof <= 0 once gave -sum, a silently wrong (negative) variance; numpy gives inf
    with pytest.raises(ValueError, match="ddof.*below the number of entries"):
        tg.var(tg.constant([1.0, 2.0, 3.0, 4.0]), ddof=5)
    with pytest.raises(ValueError, match="ddof"):
        tg.std(tg.constant([[1.0, 2.0]]), axis=0, ddof=1)
    np.testing.assert_allclose(tg.var(tg.constant([1.0, 2.0, 4.0]), ddof=2).numpy(),
                               np.var([1.0, 2.0, 4.0], ddof=2))
