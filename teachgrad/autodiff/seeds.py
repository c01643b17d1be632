"""The cotangents a backward pass starts from: ``output_gradients``, or ones.

``tape.gradient(y, x)`` seeds the backward pass with ones of ``y``'s shape, so a
non-scalar target is summed; ``output_gradients`` gives other seeds (the gradient
of a final result with respect to ``y``, which has ``y``'s shape).
"""
from .. import backend, validate
from ..ops import ones_like
from ..ops.core.grad_util import compatible
from ..tensor import SymbolicTensor, Tensor


def seed_gradients(targets, output_gradients, producer):
    """Cotangents for the targets: ones (so a non-scalar target is summed) unless given."""
    if output_gradients is None:
        return [ones_seed(y) for y in targets]
    flat = output_gradients
    if len(flat) != len(targets):
        raise ValueError(f"Passed {len(flat)} output_gradients for {len(targets)} targets.")
    seeds = []
    for i, (y, g) in enumerate(zip(targets, flat)):
        if g is None:
            seeds.append(ones_seed(y))
            continue
        if not isinstance(g, Tensor):
            index = "" if len(targets) == 1 else f"[{i}]"
            g = Tensor(validate.tensor_like(g, f"output_gradients{index}",
                                            "GradientTape.gradient", y.dtype))
        if not compatible(g.shape, y.shape):
            raise ValueError(seed_shape_message(i, len(targets), y, g, producer))
        seeds.append(g)
    return seeds


def ones_seed(y):
    """The default cotangent of a target: ones of its shape (an op where ``y`` has no value
    here: a graph node, or one example's view of a batch in tg.vectorized_map)."""
    if isinstance(y, SymbolicTensor) or y.value is None:
        return ones_like(y)
    return Tensor(backend.xp.ones_like(y.value))


def seed_shape_message(i, count, y, g, producer):
    node = producer(y.id)
    made = f"the output of {node.op.name}" if node is not None else "made by no recorded op"
    which = f"the target ({made})" if count == 1 else f"target {i} ({made})"
    index = "" if count == 1 else f"[{i}]"
    return (f"output_gradients{index} has shape {tuple(g.shape)}, but {which} has shape "
            f"{tuple(y.shape)}. An output gradient is the gradient of the final result with "
            f"respect to its target, so it has the target's shape: pass one of shape "
            f"{tuple(y.shape)} (or None for ones).")
