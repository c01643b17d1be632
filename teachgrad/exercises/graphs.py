"""The graphs ``check_backward`` tries a student's backward pass on.

Each is small enough to read in a message, and each tries one thing an engine must
get right: a chain, a value used several times, a diamond, a source with no path to
the target, bool and integer inputs (no gradient), broadcasting; then random graphs
with many shared values, and a chain ``DEEP`` operations long (a recursive walk
runs out of Python stack there).
"""
import numpy as np

from .. import ops
from ..tensor import constant

DEEP = 10_000


def _chain(x):
    return ops.sin(ops.cos(x) * 2.0)


def _fan_out(x, y):               # lesson 2's: a is used three times
    a = x * y
    return ops.sin(a) * ops.exp(a) + a


def _diamond(x):
    a = x * 1.5
    return ops.sin(a) * ops.cos(a)


def _unconnected(x, w):
    return x * x + 0 * ops.stop_gradient(w)


def _bool_input(x, y):            # where(): its condition is a bool tensor, with no gradient
    return ops.sum(ops.where(x > 0.0, x * y, y))


def _int_input(x):                # power's exponent is an integer tensor: no gradient
    return ops.sum(x ** constant(3) * ops.cast(constant([1, 2]), np.float64))


def _vector(x, w):                # broadcasting and a reduction
    return ops.sum(ops.tanh(x * w) * x)


def _deep(x):
    h = x
    for _ in range(DEEP):
        h = ops.sin(h)
    return h


CASES = [
    ("a chain: sin(2 cos x)", _chain, (0.7,)),
    ("a value used three times (lesson 2's z)", _fan_out, (0.5, 2.0)),
    ("a diamond: sin(a) cos(a), a = 1.5 x", _diamond, (0.3,)),
    ("a source with no path to the target", _unconnected, (1.5, -2.0)),
    ("a bool tensor among a node's inputs", _bool_input, ([1.0, -2.0, 0.5], [0.3, 0.4, 0.5])),
    ("an integer tensor among a node's inputs: x ** 3, 3 an int64 tensor", _int_input,
     ([0.5, 2.0],)),
    ("vectors: sum(tanh(x w) x), w of shape (1,)", _vector, ([0.5, -1.0, 2.0], [0.7])),
]

_UNARY = [ops.sin, ops.cos, ops.tanh, lambda v: v * 0.5]
_BINARY = [ops.add, ops.multiply, ops.subtract]


def _random_case(seed):
    """A random graph of 8 to 14 operations on three inputs, many values used more than once."""
    rng = np.random.default_rng(seed)
    steps = []
    for n in range(3, 3 + int(rng.integers(8, 15))):
        if rng.random() < 0.4:
            steps.append((_UNARY[int(rng.integers(0, len(_UNARY)))], int(rng.integers(0, n))))
        else:
            steps.append((_BINARY[int(rng.integers(0, len(_BINARY)))], int(rng.integers(0, n)),
                          int(rng.integers(0, n))))

    def random_graph(a, b, c):
        values = [a, b, c]
        for op, *picks in steps:
            values.append(op(*[values[k] for k in picks]))
        return values[-1] + values[-2] * values[3]
    point = tuple(float(v) for v in rng.uniform(-1.0, 1.0, 3))
    return (f"random graph {seed}", random_graph, point)


def cases():
    """The graphs ``check_backward`` tries, in order: ``(name, f, point)``."""
    yield from CASES
    for seed in range(6):
        yield _random_case(seed)
    yield (f"a chain of {DEEP:,} sin operations", _deep, (0.3,))
