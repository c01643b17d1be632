"""``tg.random``: random numbers as ops, with TensorFlow's names, arguments and seeds.

    tg.random.set_seed(0)                        # the same numbers in every run
    w = tg.random.normal([3, 2], stddev=0.1)
    i = tg.random.categorical(tf_logits, 5)      # 5 classes per row
    g = tg.random.Generator.from_seed(1)         # a stream of one's own
    s = tg.random.stateless_uniform([4], seed=[1, 2])   # a pure function of the seed

A draw is an op, so what matters is when it *runs*. Eagerly, at once. In a traced
function, on every call: ``tg.function`` records a node that draws anew each time
(the optimiser never folds a draw into a constant, nor merges two), where Python's
``random.random()`` runs once, at trace time, and its number is frozen into the
graph. The stateless forms are pure: the same seed gives the same numbers, in a
graph too. The seeds' rules are TensorFlow's (see ``teachgrad/ops/random/seeds.py``);
the numbers are numpy's (Philox), not TensorFlow's. No draw has a derivative.
"""
from .ops.core.apply import innermost
from .ops.core.naming import name_public_ops as _name_public_ops
from .ops.random import distributions as _d
from .ops.random.draws import (
    STATEFUL as _STATEFUL,
    STATELESS as _STATELESS,
    shuffle_p as _shuffle_p,
)
from .ops.random.generator import Generator
from .ops.random.replay import draw as _draw
from .ops.random.seeds import op_seed as _op_seed, set_seed, stream_for as _stream_for

__all__ = ["Generator", "categorical", "normal", "set_seed", "shuffle", "stateless_categorical",
           "stateless_normal", "stateless_uniform", "uniform"]


def _stateful(seed, where):
    """``draw(kind, shape, dtype, low, high)`` for an op seeded by ``seed`` (see seeds.py)."""
    seed = _op_seed(seed, where)

    def draw(kind, shape, dtype, low, high):
        return _draw(_STATEFUL[kind], shape=shape, dtype=dtype,
                     stream=_stream_for(kind, seed, where), low=low, high=high)
    return draw


def _stateless(seed, where):
    seed = _d.seed_tensor(seed, where)

    def draw(kind, shape, dtype, low, high):
        return innermost.process(_STATELESS[kind], seed, shape=shape, dtype=dtype, low=low, high=high)
    return draw


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Normal numbers of ``shape`` (``tf.random.normal``): ``mean`` and ``stddev`` numbers
    or tensors of ``dtype`` (default tg.float32); ``seed`` the op seed."""
    where = "tg.random.normal"
    return _d.normal(_stateful(seed, where), shape, mean, stddev, dtype, where)


def uniform(shape, minval=0, maxval=None, dtype=None, seed=None):
    """Uniform numbers in ``[minval, maxval)`` (``tf.random.uniform``): maxval 1 for a float
    dtype (default tg.float32); for an integer dtype it must be given."""
    where = "tg.random.uniform"
    return _d.uniform(_stateful(seed, where), shape, minval, maxval, dtype, where)


def categorical(logits, num_samples, dtype=None, seed=None):
    """``num_samples`` class indices per row of ``logits`` [batch, classes], each drawn with
    probabilities softmax(row) (``tf.random.categorical``): int64 [batch, num_samples]."""
    where = "tg.random.categorical"
    seed = _op_seed(seed, where)
    return _d.categorical(logits, num_samples, dtype,
                          lambda: _stream_for("categorical", seed, where), where)


def shuffle(value, seed=None):
    """``value`` with its rows (axis 0) in a random order (``tf.random.shuffle``)."""
    where = "tg.random.shuffle"
    seed = _op_seed(seed, where)
    return _draw(_shuffle_p, value, stream=_stream_for("shuffle", seed, where))


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=None):
    """``tf.random.stateless_normal``: normal numbers that depend only on ``seed`` (two
    integers): the same seed, the same numbers, eagerly and in every call of a graph."""
    where = "tg.random.stateless_normal"
    return _d.normal(_stateless(seed, where), shape, mean, stddev, dtype, where)


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=None):
    """``tf.random.stateless_uniform``: uniform numbers that depend only on ``seed``."""
    where = "tg.random.stateless_uniform"
    return _d.uniform(_stateless(seed, where), shape, minval, maxval, dtype, where)


def stateless_categorical(logits, num_samples, seed, dtype=None):
    """``tf.random.stateless_categorical``: class indices that depend only on ``seed``."""
    return _d.stateless_categorical(logits, num_samples, seed, dtype,
                                    "tg.random.stateless_categorical")


# Every public draw above takes name= too, as every op does.
_name_public_ops(globals(), prefix="tg.random.", keep=("set_seed",))
