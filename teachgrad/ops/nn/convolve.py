r"""numpy's ``convolve``: the discrete convolution of two 1-D tensors,
$(a * v)_k = \sum_j a_{k - j}\, v_j$.

It is made of ops with gradients: ``a`` (the longer input; numpy swaps them so) is
padded with zeros as ``mode`` says, its length-``m`` windows are read with ``gather``
(a window per output), and each window is multiplied by ``v`` reversed (``matmul``).
So the gradient in ``a`` adds each output's cotangent back onto its window, and the
gradient in ``v`` sums the windows weighted by the cotangents.
"""
from ... import backend, validate
from ..core.grad_util import as_tensor
from ..linalg.matmul import matmul
from ..shape.appending import same_dtype
from ..shape.indexing import gather
from ..shape.padding import pad
from ..shape.rearrange import flip

MODES = ("full", "same", "valid")


def _vector(value, name):
    x = as_tensor(value, name, "tg.convolve")
    if x.ndim == 0:
        x = x.reshape((1,))
    if x.ndim != 1:
        validate.fail(ValueError, "tg.convolve", name, "a 1-D tensor (or a number)", value)
    if x.shape[0] is None:
        validate.fail(ValueError, "tg.convolve", name, "a tensor of known length", value)
    if x.shape[0] == 0:
        validate.fail(ValueError, "tg.convolve", name, "a non-empty tensor", value)
    return x


def convolve(a, v, mode="full"):
    r"""The convolution $(a * v)_k = \sum_j a_{k - j} v_j$ of 1-D tensors (numpy's
    ``convolve``), with ``mode``:

    * ``"full"``: every overlap, $n + m - 1$ entries;
    * ``"same"``: the middle $\max(n, m)$ entries of the full one;
    * ``"valid"``: only where the two overlap completely, $\max(n, m) - \min(n, m) + 1$.

    Differentiable in both inputs (made of ``pad``, ``gather`` and ``matmul``).
    """
    mode = validate.one_of(mode, "mode", "tg.convolve", MODES)
    a, v = _vector(a, "a"), _vector(v, "v")
    if v.shape[0] > a.shape[0]:   # numpy convolves the longer with the shorter
        a, v = v, a
    a, v = same_dtype([a, v], [a.dtype, v.dtype])
    n, m = a.shape[0], v.shape[0]
    # "same" is the full result from entry (m - 1) // 2 on: m // 2 zeros before a
    before = {"full": m - 1, "same": m // 2, "valid": 0}[mode]
    after = {"full": m - 1, "same": (m - 1) // 2, "valid": 0}[mode]
    padded = pad(a, ((before, after),)) if before or after else a
    count = n + before + after - m + 1
    xp = backend.xp
    windows = xp.arange(count)[:, None] + xp.arange(m)[None, :]   # window k: k ... k+m-1
    return matmul(gather(padded, windows), flip(v, 0)[:, None])[:, 0]
