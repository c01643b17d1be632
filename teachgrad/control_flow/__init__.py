"""Control flow with gradients: ``while_loop``, ``cond``, ``switch_case`` and ``case``,
eager and in graphs, and the sequence functions built on ``while_loop``: ``TensorArray``,
``scan``, ``map_fn``, ``foldl``, ``foldr``."""
from .cond import cond
from .scan import foldl, foldr, map_fn, scan
from .switch_case import case, switch_case
from .tensor_array import TensorArray
from .while_loop import while_loop

__all__ = ["TensorArray", "case", "cond", "foldl", "foldr", "map_fn", "scan", "switch_case",
           "while_loop"]
