"""TensorFlow's two seeds, and the stream of numbers each random op draws from.

A random op draws from a *stream*: a numpy ``Generator`` on the Philox bit
generator, keyed by two seeds, the **global** seed (``tg.random.set_seed``) and
the op's own (``seed=``). The rules are TensorFlow's (``tf.random.set_seed``):

1. neither is set: the numbers differ from run to run (fresh entropy);
2. only the global seed: each op gets an op seed of its own, deterministically
   (eagerly the count of ops drawn since ``set_seed``; in a graph the node's
   position in it), so a program run again draws the same sequence;
3. only the op seed: the global seed is a fixed default, and the same holds;
4. both: the stream is the pair's.

Eagerly, the ops with the same two seeds share one stream, which moves on at
each draw: ``uniform([1], seed=1)`` twice gives two different numbers, and
``set_seed`` starts every stream again. In a graph each node has its own stream,
made when it is traced, so two nodes with the same seeds draw the same numbers,
and each call of the traced function moves both on: a call draws anew.

The numbers are numpy's, not TensorFlow's bit streams: the rules are the same,
the values are not.
"""
import numpy as np

from ... import validate
from ...state import state

#: The global seed an op seed is paired with when ``set_seed`` was never called.
DEFAULT_GLOBAL_SEED = 87654321

#: Marks the op seeds picked by rule 2, so that they never give the stream of an
#: explicit ``seed=`` (``uniform()`` and ``uniform(seed=1)`` differ).
PICKED = 0x5EED


class Stream:
    """Where one op's numbers come from: a numpy Generator (Philox), made on first use,
    keyed by ``seeds`` (a tuple of ints), or on fresh entropy when ``seeds`` is None."""

    __slots__ = ("seeds", "_generator")

    def __init__(self, seeds=None):
        self.seeds = seeds
        self._generator = None

    @property
    def generator(self):
        if self._generator is None:
            source = None if self.seeds is None else np.random.SeedSequence(list(self.seeds))
            self._generator = np.random.Generator(np.random.Philox(source))
        return self._generator

    def __repr__(self):
        return f"<random stream {'unseeded' if self.seeds is None else self.seeds}>"


class Seeds:
    """The global seed and the eager streams (one object for the process, kept here
    rather than in ``teachgrad.state``: TensorFlow's global seed is the program's)."""

    def __init__(self):
        self.global_seed = None
        self.count = 0                 # eager ops drawn since set_seed
        self.eager = {}                # (op kind, seeds) -> Stream
        self.unseeded = Stream()

    def set(self, seed):
        self.global_seed = seed
        self.count = 0
        self.eager.clear()

    def op_seeds(self, op_seed):
        """The two seeds of an op made now with ``op_seed`` (None: rule 1)."""
        if op_seed is None:
            if self.global_seed is None:
                return None
            graph = state.graph
            if graph is not None:
                return (self.global_seed, len(graph.nodes), PICKED)
            self.count += 1
            return (self.global_seed, self.count, PICKED)
        return (DEFAULT_GLOBAL_SEED if self.global_seed is None else self.global_seed, op_seed)

    def stream(self, kind, op_seed):
        """The stream an op of ``kind`` made now with ``op_seed`` draws from: eagerly the
        shared one of its seeds, in a graph a new one for the node."""
        seeds = self.op_seeds(op_seed)
        if state.graph is not None:
            return Stream(seeds)
        if seeds is None:
            return self.unseeded
        key = (kind, seeds)
        stream = self.eager.get(key)
        if stream is None:
            stream = self.eager[key] = Stream(seeds)
        return stream


SEEDS = Seeds()


def set_seed(seed):
    """Set the global seed (``tf.random.set_seed``): the random ops made after it draw
    the same numbers each time the program runs; None goes back to fresh entropy.
    Eager streams start again; traced functions keep the streams they were traced with."""
    if seed is not None:
        seed = validate.integer(seed, "seed", "tg.random.set_seed", minimum=0)
    SEEDS.set(seed)


def op_seed(seed, where):
    """An op's ``seed=`` argument checked: None or an int >= 0."""
    return None if seed is None else validate.integer(seed, "seed", where, minimum=0)


def stream_for(kind, seed, where):
    """The stream for an op of ``kind`` called now by ``where`` with ``seed=``."""
    return SEEDS.stream(kind, op_seed(seed, where))


def stateless_stream(seed_array):
    """A stream keyed by a stateless op's ``seed`` (two integers): the same two, the same
    numbers, in every program."""
    key = np.asarray(seed_array).astype(np.int64).reshape(-1).view(np.uint64)
    return np.random.Generator(np.random.Philox(key=key))
