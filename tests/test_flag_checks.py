"""Every flag and every name is checked (issue 41, item 7).

A bool flag given as a string (``tg.scan(reverse="no")``: a non-empty string is truthy,
so it would silently mean True) and a ``name`` given as an int (``tg.Variable(name=5)``)
are refused with a TypeError that names the parameter and the function. The table is the
public API itself: every function and class of ``tg``, ``tg.nn``, ``tg.linalg``,
``tg.random`` and ``tg.optimizers``, the public methods fuzzed by ``test_api_fuzz`` and the
``tg.viz`` constructors that are cheap to build, read by ``inspect.signature``. Each
parameter whose default is True or False, and each parameter called ``name``, is called
with a bad value in the working call that ``test_api_fuzz`` knows for the function.
``EXCEPTIONS`` lists the parameters left out, each with the reason.
"""
import inspect

import pytest
import test_api_fuzz as fuzz

import teachgrad as tg
from teachgrad import validate

BAD = {"flag": "no", "name": 5}

#: (function label, parameter): why it is not a checked flag or name.
EXCEPTIONS = {
    ("set_backend", "name"): "the backend's name, checked as one of the backends",
    ("name_scope", "name"): "the scope's name, checked by name_scope itself",
    ("function", "optimize"): "True, False or the names of graph passes ('prune,fold'): a "
                              "string is meant, and a wrong one is a ValueError naming it",
}


def _function_named(label):
    """What an error about ``label``'s arguments calls the function: ``tg.scan`` for
    ``scan``, ``GradientTape.jacobian`` for the method; a Tensor method is its op
    (``x.astype`` is ``tg.cast``)."""
    from teachgrad.tensor import Tensor
    if label.startswith("Tensor."):
        method = label.split(".")[1]
        return Tensor.OPERATORS.get(method, method)
    spaces = ("viz.", "random.", "optimizers.", "nn.", "linalg.")
    return label.rsplit(".", 1)[-1] if label.startswith(spaces) else label


def _random_functions():
    return {f"random.{n}": getattr(tg.random, n) for n in tg.random.__all__
            if getattr(tg.random, n) is not getattr(tg, n, None)}


def _kind(parameter):
    if parameter.name == "name":
        return "name"
    if isinstance(parameter.default, bool):
        return "flag"
    return None


def _parameters(fn):
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return []


def _cases():
    cases = []
    functions = {**fuzz.FUNCTIONS, **_random_functions()}
    for label, fn in sorted(functions.items()):
        for p in _parameters(fn):
            if _kind(p) and (label, p.name) not in EXCEPTIONS:
                cases.append(("function", label, p.name, _kind(p)))
    for label, (fn, _) in sorted(fuzz.VIZ.items()):
        for p in _parameters(fn):
            if _kind(p) and (label, p.name) not in EXCEPTIONS:
                cases.append(("viz", label, p.name, _kind(p)))
    for label, make in sorted(fuzz._methods().items()):
        for p in _parameters(make()[0]):
            if _kind(p) and (label, p.name) not in EXCEPTIONS:
                cases.append(("method", label, p.name, _kind(p)))
    return cases


CASES = _cases()


def _call(where, label, parameter, value):
    if where == "function":
        fn = {**fuzz.FUNCTIONS, **_random_functions()}[label]
        try:
            kwargs, graph = fuzz._good_kwargs(label, fn)
        except KeyError:
            kwargs, graph = _random_kwargs(fn), None
    elif where == "viz":
        fn, make = fuzz.VIZ[label]
        kwargs, graph = make(), None
    else:
        fn, kwargs = fuzz._methods()[label]()
        graph = None
    kwargs[parameter] = value
    return fuzz._Call(label, fn, kwargs, graph)()


def _random_kwargs(fn):
    good = {"shape": (2,), "seed": [1, 2], "logits": [[0.0, 1.0]], "num_samples": 2,
            "value": [1.0, 2.0], "alpha": 1.0}
    return {p.name: good[p.name] for p in _parameters(fn) if p.default is p.empty
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


def test_the_table_finds_the_flags_the_issue_names():
    found = {(label, parameter) for _, label, parameter, _ in CASES}
    for case in [("scan", "reverse"), ("case", "exclusive"), ("case", "strict"),
                 ("TensorArray", "dynamic_size"), ("TensorArray", "name"),
                 ("GradientTape", "persistent"), ("Variable", "trainable"),
                 ("sum", "keepdims"), ("Variable", "name"), ("multiply", "name")]:
        assert case in found, case
    assert len(CASES) > 100


@pytest.mark.parametrize("where, label, parameter, kind", CASES,
                         ids=[f"{c[1]}-{c[2]}" for c in CASES])
def test_a_bad_flag_or_name_is_refused(where, label, parameter, kind):
    with pytest.raises(TypeError) as info:
        _call(where, label, parameter, BAD[kind])
    message = str(info.value)
    assert parameter in message, message
    assert _function_named(label) in message, message


@pytest.mark.parametrize("where, label, parameter, kind",
                         [c for c in CASES if c[3] == "flag"],
                         ids=[f"{c[1]}-{c[2]}" for c in CASES if c[3] == "flag"])
def test_a_flag_given_as_a_bool_still_works(where, label, parameter, kind):
    """The check refuses only what is not a bool: the working call with the flag's own
    default still runs."""
    fn = {**fuzz.FUNCTIONS, **_random_functions()}.get(label)
    if where == "function":
        default = inspect.signature(fn).parameters[parameter].default
    elif where == "viz":
        default = inspect.signature(fuzz.VIZ[label][0]).parameters[parameter].default
    else:
        default = inspect.signature(fuzz._methods()[label]()[0]).parameters[parameter].default
    _call(where, label, parameter, default)


# -- the checker itself ----------------------------------------------------------------------

def test_flags_takes_bools_and_names_and_refuses_the_rest():
    validate.flags("tg.f", keepdims=True, reverse=False, name="a")
    validate.flags("tg.f", name=None)
    with pytest.raises(TypeError, match=r"tg\.f: `reverse` must be True or False"):
        validate.flags("tg.f", reverse="no")
    with pytest.raises(TypeError, match=r"tg\.f: `name` must be a string"):
        validate.flags("tg.f", name=5)
    with pytest.raises(TypeError, match="`keepdims`"):
        validate.flags("tg.f", keepdims=None)


# -- tg.case with no default, and map_fn's dtype list (issue 41's "taken silently") ----------

def _case_of(p):
    return tg.case([(p > 10.0, lambda: p * 2.0)])


def _in_graph(fn, value):
    graph = tg.Graph()
    with graph.as_default():
        p = tg.placeholder(tg.float64, shape=(), name="p")
        y = fn(p)
    return tg.Session(graph).run(y, {p: value})


@pytest.mark.parametrize("mode", ["eager", "function", "graph"])
def test_case_with_no_true_predicate_and_no_default_raises(mode):
    """As TensorFlow's ``tf.case``: without a default, no true predicate is an error, also
    in a graph, where the check runs with the graph (it used to be pruned away, and the
    last fn's value came back)."""
    run = {"eager": lambda v: _case_of(tg.constant(v)),
           "function": lambda v: tg.function(_case_of)(tg.constant(v)),
           "graph": lambda v: _in_graph(_case_of, v)}[mode]
    with pytest.raises(ValueError, match="none of the predicates is true"):
        run(1.0)
    assert float(run(12.0)) == 24.0


def test_case_still_takes_the_first_true_of_several_without_a_default():
    def f(p):
        return tg.case([(p < 0.0, lambda: -p), (p > 10.0, lambda: p - 10.0)])
    assert float(_in_graph(f, -3.0)) == 3.0
    assert float(_in_graph(f, 13.0)) == 3.0
    assert float(tg.function(f)(tg.constant(13.0))) == 3.0


@pytest.mark.parametrize("dtype", [[tg.float64, tg.float64], (tg.float64, tg.float64)])
def test_map_fn_takes_a_dtype_per_output_of_a_tuple_valued_fn(dtype):
    x = tg.constant([1.0, 2.0, 3.0])
    a, b = tg.map_fn(lambda t: (t, t * 2.0), x, dtype=dtype)
    assert a.numpy().tolist() == [1.0, 2.0, 3.0] and b.numpy().tolist() == [2.0, 4.0, 6.0]
    with pytest.raises(ValueError, match="different structure"):
        tg.map_fn(lambda t: (t, t * 2.0), x, dtype=[tg.float64])
