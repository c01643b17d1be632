"""The composition table: small programs that combine teachgrad's features.

Each ``Program`` is one small function of float64 tensors, built from plain ops
with broadcasting, a ``tg.while_loop``, a ``tg.cond``, a ``tg.custom_gradient``,
a ``tg.recompute_grad`` or a sparse ``tg.gather``, together with

* ``ref``: the same program written in plain numpy (the reference that finite
  differences are taken of, in float64);
* ``inputs``: a hypothesis strategy of ``strategies.Case`` (the float64 arrays
  the program is differentiated with respect to, plus non-differentiable
  parameters, such as gather's indices, passed by keyword to ``fn`` and ``ref``);
* ``ways``: which ways of differentiating it apply (see ``WAYS``).

``tests/test_compositions.py`` differentiates every program every applicable
way, in every context (eager, inside ``@tg.function``, around a call of a
``@tg.function``, and in a ``tg.Graph`` run by a ``tg.Session``), and checks the
numbers against central finite differences of ``ref``.

To add a program, add one entry to ``PROGRAMS``.
"""
from dataclasses import dataclass
from typing import Callable, FrozenSet

import numpy as np
import strategies as S
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

import teachgrad as tg

# -- the ways of differentiating, and the contexts they run in --------------------------
#: first order, reverse mode
REVERSE_WAYS = ("tape", "gradients", "grad", "vjp", "jacrev")
#: first order, forward mode
FORWARD_WAYS = ("accumulator", "jvp", "jacfwd")
#: second order: reverse over reverse, and forward over reverse
SECOND_ORDER_WAYS = ("nested_tapes", "gradients_of_gradients", "hessian", "hvp")
WAYS = REVERSE_WAYS + FORWARD_WAYS + SECOND_ORDER_WAYS

#: the ways that need an accumulator somewhere (forward over reverse included)
USES_FORWARD_MODE = frozenset({"accumulator", "jvp", "jacfwd", "hessian", "hvp"})
#: tg.gradients exists in graphs only: in a tg.Graph, or in the graph a tg.function traces
GRAPH_ONLY_WAYS = frozenset({"gradients", "gradients_of_gradients"})

#: eager: plain Python on concrete tensors;
#: function_inside: the differentiation happens inside the body of a @tg.function;
#: function_outside: the program is a @tg.function, differentiated around its call;
#: graph: built in a tg.Graph on placeholders, run by a tg.Session.
CONTEXTS = ("eager", "function_inside", "function_outside", "graph")
GRAPH_CONTEXTS = frozenset({"function_inside", "graph"})


def way_applies(way, context):
    return way not in GRAPH_ONLY_WAYS or context in GRAPH_CONTEXTS


@dataclass(frozen=True)
class Program:
    name: str
    fn: Callable                 # fn(*tensors, **case.params) -> one Tensor
    ref: Callable                # ref(*arrays, **case.params) -> numpy's answer
    inputs: SearchStrategy       # -> strategies.Case
    ways: FrozenSet[str] = frozenset(WAYS)
    eps: float = 1e-6            # central differences, first order
    rtol: float = 1e-5
    atol: float = 1e-6
    hessian_eps: float = 1e-4    # four-point differences, second order
    second_rtol: float = 1e-4
    second_atol: float = 1e-5

    def __repr__(self):  # what pytest and hypothesis print
        return f"Program({self.name})"


# -- small helpers for the input strategies ---------------------------------------------
def _pair(shapes, x_domain=S.REALS, y_domain=S.REALS):
    """Two arrays ``(x, y)`` whose shapes are one of ``shapes``."""
    @st.composite
    def case(draw):
        sx, sy = draw(st.sampled_from(shapes))
        return S.Case((draw(S.arrays(sx, x_domain)), draw(S.arrays(sy, y_domain))))
    return case()


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


# -- 1. plain ops, with broadcasting -----------------------------------------------------
def plain(x, y):
    return tg.sin(x) * y + x ** 2


def plain_ref(x, y):
    return np.sin(x) * y + x ** 2


# -- 2. a while loop: x = x * y + sin(x), three times (y is captured by the body) -------
def loop(x, y):
    def body(i, x):
        return i + 1, x * y + tg.sin(x)
    _, x = tg.while_loop(lambda i, x: i < 3, body, [tg.constant(0), x])
    return x


def loop_ref(x, y):
    for _ in range(3):
        x = x * y + np.sin(x)
    return x


# -- 3. a cond whose branch depends on the data; both branches differentiable ----------
def branch(x, y):
    return tg.cond(tg.sum(x) > 0,
                   lambda: tg.sin(x) * y + x,
                   lambda: tg.exp(0.5 * x) * y - x * x)


def branch_ref(x, y):
    if np.sum(x) > 0:
        return np.sin(x) * y + x
    return np.exp(0.5 * x) * y - x * x


def _branch_inputs():
    # Keep sum(x) away from 0: finite differences must not cross to the other branch.
    return _pair([((3,), (3,)), ((2, 2), ()), ((2,), (2,))]).filter(
        lambda case: abs(np.sum(case.arrays[0])) > 0.05)


# -- 4. custom gradients ------------------------------------------------------------------
@tg.custom_gradient
def log1pexp_stable(x):
    """log(1 + e^x), with the stable derivative sigmoid(x) computed from x in grad_fn."""
    def grad_fn(upstream):
        return upstream * tg.sigmoid(x)
    return tg.log1p(tg.exp(x)), grad_fn


@tg.custom_gradient
def log1pexp_saved(x):
    """log(1 + e^x), whose grad_fn uses the forward pass's intermediate e = exp(x)."""
    e = tg.exp(x)

    def grad_fn(upstream):
        return upstream * (1 - 1 / (1 + e))
    return tg.log(1 + e), grad_fn


def custom_stable(x, y):
    return tg.cos(x) * log1pexp_stable(x * y)


def custom_stable_ref(x, y):
    return np.cos(x) * np.log1p(np.exp(x * y))


def custom_saved(x, y):
    return log1pexp_saved(x * y) * y


def custom_saved_ref(x, y):
    return np.log1p(np.exp(x * y)) * y


# -- 5. recompute_grad ---------------------------------------------------------------------
def _block(x, y):
    return tg.sin(x) * tg.exp(y) + x * y


recomputed_block = tg.recompute_grad(_block)


def recompute(x, y):
    return tg.tanh(recomputed_block(x, y))


def recompute_ref(x, y):
    return np.tanh(np.sin(x) * np.exp(y) + x * y)


# -- 6. a sparse gather, then a reduction -----------------------------------------------
def gathered(params, y, indices):
    return tg.sum(tg.sin(tg.gather(params, indices, axis=0)) * y, axis=0)


def gathered_ref(params, y, indices):
    return np.sum(np.sin(np.take(params, indices, axis=0)) * y, axis=0)


@st.composite
def _gather_inputs(draw):
    """params of shape (n,) or (n, 2); 1 to 4 indices into its rows, with repeats and
    negative indices; y of the shape of one row."""
    shape = draw(st.sampled_from([(4, 2), (3,), (3, 1)]))
    indices = draw(S.index_arrays(shape[0], st.tuples(st.integers(1, 4))))
    params = draw(S.arrays(shape))
    y = draw(S.arrays(shape[1:], S.Domain(-2.0, 2.0)))
    return S.Case((params, y), {"indices": indices})


# -- 7. an argument the output does not depend on -----------------------------------------
def unconnected(x, y):
    return tg.sin(x) * 2.0


def unconnected_ref(x, y):
    return np.sin(x) * 2.0


# -- 8. sequences: an RNN-like tg.scan, and a tg.foldr over what tg.map_fn made ----------
def scanned(x, y):
    return tg.scan(lambda h, x_t: tg.tanh(h * y + x_t), x, initializer=tg.zeros_like(y))


def scanned_ref(x, y):
    h, hs = np.zeros_like(y), []
    for x_t in x:
        h = np.tanh(h * y + x_t)
        hs.append(h)
    return np.stack(hs)


def folded(x, y):
    return tg.foldr(lambda a, r: a * tg.cos(r) + r * y, tg.map_fn(lambda r: tg.sin(r) * y, x))


def folded_ref(x, y):
    a = np.sin(x[-1]) * y
    for r in np.sin(x[-2::-1]) * y:
        a = a * np.cos(r) + r * y
    return a


# -- the table -----------------------------------------------------------------------------
PROGRAMS = [
    Program("plain_broadcast", plain, plain_ref,
            _pair([((2, 3), (3,)), ((3,), (2, 1)), ((), (2,)), ((2,), (2,))])),
    Program("while_loop", loop, loop_ref,
            _pair([((3,), (3,)), ((2,), ())], S.Domain(-1.0, 1.0), S.Domain(-1.0, 1.0)),
            second_atol=1e-4),
    Program("cond", branch, branch_ref, _branch_inputs()),
    Program("custom_gradient_stable", custom_stable, custom_stable_ref,
            _pair([((3,), (3,)), ((2,), ())])),
    Program("custom_gradient_saved", custom_saved, custom_saved_ref,
            _pair([((3,), (3,)), ((2,), ())])),
    # recompute_grad has no forward mode by design (test_compositions checks the error).
    Program("recompute_grad", recompute, recompute_ref,
            _pair([((3,), (3,)), ((2,), ())], S.REALS, S.Domain(-1.0, 1.0)),
            ways=frozenset(WAYS) - USES_FORWARD_MODE),
    Program("sparse_gather", gathered, gathered_ref, _gather_inputs()),
    Program("scan", scanned, scanned_ref,
            _pair([((3, 2), (2,)), ((2,), ())], S.Domain(-1.0, 1.0), S.Domain(-1.0, 1.0))),
    Program("map_fn_foldr", folded, folded_ref,
            _pair([((3, 2), (2,)), ((2,), ())], S.Domain(-1.0, 1.0), S.Domain(-1.0, 1.0))),
    Program("unconnected_argument", unconnected, unconnected_ref,
            _pair([((3,), (2,)), ((), ())])),
]

PROGRAMS_BY_NAME = {p.name: p for p in PROGRAMS}
