"""Control flow with gradients: ``while_loop`` and ``cond``, eager and in graphs, and the
sequence functions built on ``while_loop``: ``TensorArray``, ``scan``, ``map_fn``, ``foldl``,
``foldr``."""
from .cond import cond
from .scan import foldl, foldr, map_fn, scan
from .tensor_array import TensorArray
from .while_loop import while_loop

__all__ = ["TensorArray", "cond", "foldl", "foldr", "map_fn", "scan", "while_loop"]
