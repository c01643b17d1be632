"""``tg.random.Generator``: a stream of random numbers held as an object.

Where the global and op seeds (``seeds.py``) give each op its stream by rules,
a Generator *is* one stream, which every draw from it moves on: eagerly, and in
a traced function, whose nodes draw from the very same stream on every call
(``tf.random.Generator``: its state is a Variable the ops update)::

    g = tg.random.Generator.from_seed(1)
    a = g.normal([3])         # the same three numbers in every program
    b = g.normal([3])         # the next three

The numbers are numpy's (Philox), not TensorFlow's.
"""
import numpy as np

from ... import validate
from ...dtypes import int64
from . import distributions
from .draws import STATEFUL, shuffle_p
from .replay import draw
from .seeds import Stream


class Generator:
    """A random-number generator: ``Generator.from_seed(seed)`` or
    ``Generator.from_non_deterministic_state()``."""

    def __init__(self, stream=None):
        if stream is not None and not isinstance(stream, Stream):
            validate.fail(TypeError, "tg.random.Generator", "stream", "nothing: make one "
                          "with Generator.from_seed(seed) or from_non_deterministic_state()",
                          stream)
        self.stream = Stream() if stream is None else stream

    @classmethod
    def from_seed(cls, seed, alg=None):
        """A generator whose numbers are the same in every program with this ``seed``."""
        seed = validate.integer(seed, "seed", "tg.random.Generator.from_seed", minimum=0)
        return cls(Stream((seed,)))

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        """A generator on fresh entropy: other numbers each time."""
        return cls(Stream())

    def _draw(self, kind, shape, dtype, low, high):
        return draw(STATEFUL[kind], shape=shape, dtype=dtype, stream=self.stream,
                    low=low, high=high)

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=None):
        """Normal numbers of ``shape`` (``tf.random.Generator.normal``)."""
        return distributions.normal(self._draw, shape, mean, stddev, dtype,
                                    "tg.random.Generator.normal")

    def uniform(self, shape, minval=0, maxval=None, dtype=None):
        """Uniform numbers in ``[minval, maxval)`` (maxval 1 for floats; for an integer
        dtype it must be given)."""
        return distributions.uniform(self._draw, shape, minval, maxval, dtype,
                                     "tg.random.Generator.uniform")

    def categorical(self, logits, num_samples, dtype=None):
        """``num_samples`` classes per row of ``logits`` (probabilities softmax(logits))."""
        return distributions.categorical(logits, num_samples, dtype, lambda: self.stream,
                                         "tg.random.Generator.categorical")

    def shuffle(self, value):
        """``value``'s rows (axis 0) in a random order."""
        return draw(shuffle_p, value, stream=self.stream)

    def make_seeds(self, count=1):
        """Seeds for the stateless ops, drawn from this generator: int64, shape [2, count]."""
        count = validate.integer(count, "count", "tg.random.Generator.make_seeds", minimum=1)
        info = np.iinfo(np.int64)
        return self._draw("integers", (2, count), int64, int(info.min), int(info.max))

    def split(self, count=1):
        """``count`` new generators, seeded from this one (which moves on)."""
        count = validate.integer(count, "count", "tg.random.Generator.split", minimum=1)
        seeds = self.stream.generator.integers(0, 2 ** 63 - 1, (count, 2))
        return [Generator(Stream(tuple(int(s) for s in pair))) for pair in seeds]

    def __repr__(self):
        return f"<tg.random.Generator {self.stream!r}>"
