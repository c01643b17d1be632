"""Which formulation of conv2d's kernel runs fastest on the CPU, for each convolution of the
benchmark's conv2d forward and backward pass, beside the one ``conv_kernels.choose`` picks.

    TEACHGRAD_KEEP_FREED_MEMORY=1 .bench-venv/bin/python benchmarks/conv_formulations.py [--quick]

It records the three convolutions (``conv_kernels.convolve``'s arguments, in the layout
the rules hand them over) of one 3x3 SAME conv2d of a (32, 32, 32, 16) batch to 32
channels with both cotangents, in float32 and float64, as ``peers/cnn.py`` runs it, and
times on each (one thread pinned to one core, the best of the repeats, in ms):

* every formulation of ``conv_kernels.FORMULATIONS``;
* three that lost and are not in the package: one matmul per tap over the whole input,
  the products added in shifted (``tap_matmuls``); one wide matmul of every pixel by all
  taps' filters, the taps' products added in shifted afterwards (``tap_products``); and
  Winograd's ``F(2x2, 3x3)`` for 3x3 filters at steps 1, with its transpose
  ``F(3x3, 2x2)`` for the 3x3 outputs of the filters' cotangent (``winograd``).

Each result is checked against ``windows`` before it is timed. The GPU counterpart is
``gpu_conv_formulations.py``.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
import common  # noqa: E402  (limits the threads before numpy loads)
import cnn  # noqa: E402
import numpy as np  # noqa: E402

from teachgrad.ops.nn import conv_kernels  # noqa: E402

# -- the contenders that lost ----------------------------------------------------------------


def tap_matmuls(x, w, strides, dilations, out):
    """One matmul per tap over all of ``x``'s rows (no window copied): tap ``(p, q)`` of
    output pixel ``(i, j)`` is input row ``(i + p) W + j + q``, a shift of the rows."""
    kh, kw, c, cout = w.shape
    if tuple(strides) != (1, 1) or tuple(dilations) != (1, 1) or out[0] * out[1] < kh * kw:
        return None   # (and not for a few outputs of a large filter: seconds)
    n, height, width, _ = x.shape
    rows = x.reshape(-1, c)
    used = rows.shape[0] - (kh - 1) * width - (kw - 1)
    total = np.zeros((rows.shape[0], cout), np.result_type(x, w))
    for p in range(kh):
        for q in range(kw):
            shift = p * width + q
            total[:used] += rows[shift:shift + used] @ w[p, q]
    return total.reshape(n, height, width, cout)[:, :out[0], :out[1]]


def tap_products(x, w, strides, dilations, out):
    """Every input pixel times all taps' filters in one wide matmul ``(pixels, c) @ (c, kh
    kw out)``, then each output the sum of its taps' products, shifted."""
    kh, kw, c, cout = w.shape
    if tuple(strides) != (1, 1) or tuple(dilations) != (1, 1) or out[0] * out[1] < kh * kw:
        return None
    (oh, ow), (n, height, width, _) = out, x.shape
    products = (x.reshape(-1, c) @ w.transpose(2, 0, 1, 3).reshape(c, -1))
    products = products.reshape(n, height, width, kh, kw, cout)
    return sum(products[:, p:p + oh, q:q + ow, p, q] for p in range(kh) for q in range(kw))


B_T = ((1, 0, -1, 0), (0, 1, 1, 0), (0, -1, 1, 0), (0, 1, 0, -1))
G = ((1, 0, 0), (0.5, 0.5, 0.5), (0.5, -0.5, 0.5), (0, 0, 1))
A_T = ((1, 1, 1, 0), (0, 1, -1, -1))


def combine(matrix, parts):
    """``[sum_k matrix[i][k] * parts[k] for each row i]``, ones as additions."""
    rows = []
    for row in matrix:
        terms = [part if c == 1 else -part if c == -1 else c * part
                 for c, part in zip(row, parts) if c != 0]
        rows.append(sum(terms[1:], terms[0]))
    return rows


def input_tiles(x, tiles_h, tiles_w):
    """``B^T d B`` of every 4x4 tile of ``x`` (two apart): ``(16, n, tiles_h, tiles_w, c)``."""
    rows = combine(B_T, [x[:, a:a + 2 * tiles_h:2] for a in range(4)])
    return np.stack([e for r in rows for e in combine(B_T, [r[:, :, b:b + 2 * tiles_w:2]
                                                           for b in range(4)])])


def winograd(x, w, strides, dilations, out):
    """``F(2x2, 3x3)`` for 3x3 filters: ``Y = A^T [(G g G^T) * (B^T d B)] A`` per tile, the
    product over the in channels one matmul per tile entry (16). For 3x3 outputs (the
    filters' cotangent) its transpose ``F(3x3, 2x2)``: ``z = G^T [(A e A^T) * (B^T d B)] G``
    over the large filter's 2x2 blocks."""
    if tuple(strides) != (1, 1) or tuple(dilations) != (1, 1):
        return None
    kh, kw, c, cout = w.shape
    (oh, ow), n = out, x.shape[0]
    if (kh, kw) == (3, 3) and oh % 2 == 0 and ow % 2 == 0:
        tiles = input_tiles(x, oh // 2, ow // 2).reshape(16, -1, c)
        filters = np.stack([e for r in combine(G, list(w)) for e in combine(G, list(r))])
        products = np.matmul(tiles, filters).reshape(4, 4, n, oh // 2, ow // 2, cout)
        total = np.empty((n, oh, ow, cout), products.dtype)
        for i, row in enumerate(combine(A_T, list(products))):
            for j, entry in enumerate(combine(A_T, list(row))):
                total[:, i::2, j::2] = entry
        return total
    if (oh, ow) == (3, 3) and kh % 2 == 0 and kw % 2 == 0:
        a, g_t = tuple(zip(*A_T)), tuple(zip(*G))
        tiles = input_tiles(x, kh // 2, kw // 2).reshape(16, n, -1)
        rows = combine(a, [w[0::2], w[1::2]])
        blocks = np.stack([e for r in rows for e in combine(a, [r[:, 0::2], r[:, 1::2]])])
        products = np.matmul(tiles, blocks.reshape(16, -1, cout)).reshape(4, 4, n, cout)
        return np.stack([np.stack(combine(g_t, list(row)), axis=1)
                         for row in combine(g_t, list(products))], axis=1)
    return None


LOST = {"one matmul per tap": tap_matmuls, "taps' products shifted": tap_products,
        "winograd": winograd}

# -- recording and timing -------------------------------------------------------------------


def recorded_convolutions(dtype):
    """[(x, w, strides, dilations, out)] of one conv2d forward and backward pass, the
    arrays as ``convolve`` received them (views kept: their layout is the point)."""
    seen, formulations = [], dict(conv_kernels.FORMULATIONS)

    def recording(f):
        def run(x, w, strides, dilations, out):
            seen.append((x, w, tuple(strides), tuple(dilations), tuple(out)))
            return f(x, w, strides, dilations, out)
        return run
    conv_kernels.FORMULATIONS.update({k: recording(f) for k, f in formulations.items()})
    try:
        cnn.conv_workload(np.random.default_rng(0), None, dtype)["teachgrad"]()
    finally:
        conv_kernels.FORMULATIONS.update(formulations)
    return seen


def best_ms(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * min(times)


def main(argv=None):
    args = common.parser(__doc__.splitlines()[0]).parse_args(argv)
    repeats = 1 if args.quick else 15
    names = ("forward", "input's cotangent", "filters' cotangent")
    for dtype in (np.float32, np.float64):
        for name, (x, w, strides, dilations, out) in zip(names, recorded_convolutions(dtype)):
            want = conv_kernels.windows_matmul(x, w, strides, dilations, out)
            cells = []
            for label, f in {**conv_kernels.FORMULATIONS, **LOST}.items():
                got = f(x, w, strides, dilations, out)
                if got is None:
                    continue
                tolerance = 1e-4 if dtype == np.float32 else 1e-12
                common.check_close(label, got, want, tolerance, tolerance)
                ms = best_ms(lambda f=f: f(x, w, strides, dilations, out), repeats)
                cells.append(f"{label} {ms:.2f}")
            chosen = conv_kernels.choose(x.shape, w.shape, strides, dilations, out, x.itemsize)
            print(f"{np.dtype(dtype).name} {name}, x {x.shape} w {w.shape} out {out}: "
                  f"{'; '.join(cells)} ms; chosen: {chosen}", flush=True)


if __name__ == "__main__":
    main()
