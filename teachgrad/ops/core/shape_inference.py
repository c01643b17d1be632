"""The shapes and dtypes of an op's outputs, found before anything runs.

A graph node has no values, only shapes and dtypes, and dimensions may be
unknown (None) until the graph runs. An op may give a *shape rule*
(``op.shape_rule(*inputs, **params) -> [(shape, dtype), ...]``); otherwise its
forward kernel is run on **stand-in** arrays: zeros of the input shapes that
take no memory (``np.broadcast_to`` of one zero), with each unknown dimension
set to a few different sizes. A result dimension that comes out the same every
time is known; one that varies is not.
"""
import contextlib
import warnings

import numpy as np

from ... import backend


def _stand_in(tensor, fill):
    """A zero array of ``tensor``'s shape (unknown dimensions set to ``fill``), no memory."""
    shape = () if tensor.shape is None else tuple(fill if d is None else d for d in tensor.shape)
    return np.broadcast_to(np.zeros((), dtype=tensor.dtype), shape)


#: The sizes tried for unknown dimensions: a result dimension that comes out the
#: same in every run that works is known; one that varies is unknown (None).
STAND_IN_SIZES = (1, 2, 3, 5, 0)


def infer_outputs(op, inputs, params):
    """The (shape, dtype) of each output: by the op's rule, or by running its kernel
    on zero-size-in-memory stand-in arrays of the input shapes."""
    if op.shape_rule is not None:
        try:
            return op.shape_rule(*inputs, **params)
        except ValueError as error:
            message = str(error)
            raise ValueError(message if message.startswith(f"{op.name}:")
                             else f"{op.name}: {message}") from None
    return infer_by_stand_ins(op, inputs, params)


def infer_by_stand_ins(op, inputs, params, sizes=STAND_IN_SIZES):
    """Run the kernel with each size in ``sizes`` for the unknown dimensions."""
    unknown_rank = any(t.shape is None for t in inputs)
    if not unknown_rank and not any(None in t.shape for t in inputs):
        # Every shape is known: the stand-ins give the exact result, and an error
        # now is an error for sure.
        outs = _run_on_stand_ins(op, inputs, params, 1)
        return [(tuple(np.shape(a)), np.asarray(a).dtype) for a in outs]
    runs = {size: _try_stand_ins(op, inputs, params, size) for size in sizes}
    runs = {size: outs for size, outs in runs.items() if outs is not None}
    if not runs:   # fails whatever the unknown sizes are
        _run_on_stand_ins(op, inputs, params, sizes[0])   # raises the error
    specs = []
    for i in range(len(next(iter(runs.values())))):
        shapes = [np.shape(outs[i]) for outs in runs.values()]
        dtype = np.asarray(next(iter(runs.values()))[i]).dtype
        if unknown_rank or len({len(s) for s in shapes}) > 1:
            shape = None   # even the rank depends on the unknown sizes (squeeze, say)
        elif len(shapes) > 1:
            shape = tuple(dims[0] if len(set(dims)) == 1 else None for dims in zip(*shapes))
        else:  # one run only: a dimension equal to its size may have come from None
            (size,) = runs
            shape = tuple(None if d == size else d for d in shapes[0])
        specs.append((shape, dtype))
    return specs


def _try_stand_ins(op, inputs, params, fill):
    try:
        return _run_on_stand_ins(op, inputs, params, fill)
    except ValueError:
        return None


def _numpy_kernels():
    """The stand-ins are numpy arrays, so the kernel must run with numpy's namespace,
    also while another backend (CuPy) is in use: a CuPy kernel refuses numpy arrays."""
    return contextlib.nullcontext() if backend.xp is np else backend.using("numpy")


def _on_host(value):
    """A parameter as the numpy kernels take it: a GPU array (an index's entries, say)
    copied to the host, inside tuples and lists too."""
    if isinstance(value, (tuple, list)):
        return type(value)(_on_host(v) for v in value)
    if type(value).__module__.startswith("cupy"):
        return backend.to_numpy(value)
    return value


def _run_on_stand_ins(op, inputs, params, fill):
    arrays = [_stand_in(t, fill) for t in inputs]
    if backend.xp is not np:
        params = {k: _on_host(v) for k, v in params.items()}
    with np.errstate(all="ignore"), warnings.catch_warnings(), _numpy_kernels():
        warnings.simplefilter("ignore")   # e.g. the mean of a stand-in of size 0
        try:
            out = op.forward(*arrays, **params)
        except (ValueError, TypeError, IndexError) as error:
            shapes = ", ".join(str(t.shape) for t in inputs)
            raise ValueError(f"{op.name}: {error} (input shapes: {shapes})") from None
    return list(out) if op.multiple_results else [out]
