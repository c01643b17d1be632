"""The random ops: each draws its numbers when it *runs*, from a stream (``seeds.py``).

Two families, one kernel each way:

* the **stateful** draws (``random_uniform``, ``random_normal``, ``random_integers``,
  ``categorical``, ``shuffle``) take their stream as a param and move it on at each
  run. They are declared ``"stateful"`` (``defeffect``): the graph optimiser never
  folds one into a constant or merges two equal-looking draws, and a traced function
  runs each on every call, so every call draws anew;
* the **stateless** draws (``stateless_uniform``, ...) take their seed as an input
  tensor of two integers and make a stream from it each time: the same seed, the
  same numbers. They are pure functions of the seed (``"fresh"``): folding or merging
  them changes nothing.

None has a derivative: a draw is a constant with respect to everything. (``tg.random``
scales a standard draw by ``stddev`` and adds ``mean`` with ordinary ops, so those do
get gradients, as TensorFlow's do.)
"""
import numpy as np

from ... import backend
from ..core.declare import defeffect, defshape, not_differentiable, primitive, takes_complex
from .seeds import stateless_stream


def _uniform(generator, shape, dtype, low, high):
    kind = dtype if dtype in (np.float32, np.float64) else np.float32
    return generator.random(shape, dtype=kind).astype(dtype, copy=False)


def _normal(generator, shape, dtype, low, high):
    kind = dtype if dtype in (np.float32, np.float64) else np.float32
    return generator.standard_normal(shape, dtype=kind).astype(dtype, copy=False)


def _integers(generator, shape, dtype, low, high):
    return generator.integers(low, high, shape, dtype=dtype)


DRAWS = {"uniform": _uniform, "normal": _normal, "integers": _integers}


def _categorical(generator, logits, num_samples, dtype):
    """``num_samples`` class indices per row of ``logits``, by the Gumbel-max trick: the
    argmax of the logits plus Gumbel noise is a draw with probabilities softmax(logits)."""
    logits = np.asarray(backend.to_numpy(logits), dtype=np.float64)
    u = generator.random((logits.shape[0], num_samples, logits.shape[1]))
    gumbel = -np.log(-np.log(np.maximum(u, np.finfo(np.float64).tiny)))
    with np.errstate(invalid="ignore"):
        return np.argmax(logits[:, None, :] + gumbel, axis=-1).astype(dtype)


def _stateful(kind):
    def kernel(shape, dtype, stream, low=None, high=None):
        return backend.xp.asarray(DRAWS[kind](stream.generator, shape, dtype, low, high))
    op = not_differentiable(primitive(f"random_{kind}", kernel))
    defshape(op, lambda shape, dtype, **params: [(shape, dtype)])
    return defeffect(op, "stateful")


def _stateless(kind):
    def kernel(seed, shape, dtype, low=None, high=None):
        return backend.xp.asarray(DRAWS[kind](stateless_stream(backend.to_numpy(seed)),
                                              shape, dtype, low, high))
    op = not_differentiable(primitive(f"stateless_{kind}", kernel))
    defshape(op, lambda seed, shape, dtype, **params: [(shape, dtype)])
    return defeffect(op, "fresh")


STATEFUL = {kind: _stateful(kind) for kind in DRAWS}
STATELESS = {kind: _stateless(kind) for kind in DRAWS}


def _categorical_shape(logits, *seed, num_samples, dtype, **params):
    rows = None if logits.shape is None else logits.shape[0]
    return [((rows, num_samples), dtype)]


# categorical(logits, num_samples, dtype, stream): samples [rows, num_samples].
categorical_p = not_differentiable(primitive(
    "categorical", lambda logits, num_samples, dtype, stream: backend.xp.asarray(
        _categorical(stream.generator, logits, num_samples, dtype))))
defshape(categorical_p, _categorical_shape)
defeffect(categorical_p, "stateful")

# stateless_categorical(logits, seed, num_samples, dtype)
stateless_categorical_p = not_differentiable(primitive(
    "stateless_categorical", lambda logits, seed, num_samples, dtype: backend.xp.asarray(
        _categorical(stateless_stream(backend.to_numpy(seed)), logits, num_samples, dtype))))
defshape(stateless_categorical_p, _categorical_shape)
defeffect(stateless_categorical_p, "fresh")


def _shuffle_kernel(value, stream):
    if value.ndim == 0:
        return value.copy()
    order = stream.generator.permutation(value.shape[0])
    return value[backend.xp.asarray(order)]


# shuffle(value, stream): value's rows (axis 0) in a random order.
shuffle_p = not_differentiable(primitive("shuffle", _shuffle_kernel))
takes_complex(shuffle_p)
defshape(shuffle_p, lambda value, stream: [(value.shape, value.dtype)])
defeffect(shuffle_p, "stateful")
