"""Hypothesis strategies and plain numpy references for the op table's ``tg.nn`` lines:
convolution (and the ops its VJP is made of) and pooling.

The references are loops over output pixels written from the definitions (TensorFlow's
geometry, see ``teachgrad/ops/nn/windows.py``), never from teachgrad's kernels, so that a
slip in the strided views or the matmul shows up. Shapes are tiny (finite differences
evaluate the op once per input entry, twice).
"""
import numpy as np
from hypothesis import assume, strategies as st
from strategies import Case, Domain, arrays, distinct_arrays


# -- TensorFlow's window geometry, one axis at a time ----------------------------------
def geometry(size, k, stride, dilation, padding):
    """(padding before, number of windows) along one axis."""
    span = (k - 1) * dilation + 1
    if padding == "VALID":
        return 0, (size - span) // stride + 1
    out = -(-size // stride)
    return max((out - 1) * stride + span - size, 0) // 2, out


def conv2d(x, w, strides, padding, dilations):
    """$y_{b,i,j,o} = \\sum_{p,q,c} x_{b, i s_h + p d_h - top, j s_w + q d_w - left, c}
    w_{p,q,c,o}$, outside entries counting as 0."""
    n, height, width, _ = x.shape
    kh, kw, _, cout = w.shape
    top, oh = geometry(height, kh, strides[0], dilations[0], padding)
    left, ow = geometry(width, kw, strides[1], dilations[1], padding)
    y = np.zeros((n, oh, ow, cout), np.result_type(x, w))
    for i in range(oh):
        for j in range(ow):
            for p in range(kh):
                for q in range(kw):
                    r = i * strides[0] + p * dilations[0] - top
                    c = j * strides[1] + q * dilations[1] - left
                    if 0 <= r < height and 0 <= c < width:
                        y[:, i, j, :] += x[:, r, c, :] @ w[p, q]
    return y


def _spans(w, dilations):
    return [(k - 1) * d + 1 for k, d in zip(w.shape[:2], dilations)]


def spread(g, x, w, strides, padding, dilations):
    """g's pixel (i, j) put at (span_h - 1 - top + i s_h, span_w - 1 - left + j s_w) of
    zeros shaped (n, height + span_h - 1, width + span_w - 1, channels)."""
    (sh, sw), (span_h, span_w) = strides, _spans(w, dilations)
    top, _ = geometry(x.shape[1], w.shape[0], sh, dilations[0], padding)
    left, _ = geometry(x.shape[2], w.shape[1], sw, dilations[1], padding)
    out = np.zeros((g.shape[0], x.shape[1] + span_h - 1, x.shape[2] + span_w - 1, g.shape[3]),
                   g.dtype)
    for i in range(g.shape[1]):
        for j in range(g.shape[2]):
            out[:, span_h - 1 - top + i * sh, span_w - 1 - left + j * sw, :] = g[:, i, j, :]
    return out


def unspread(h, x, w, strides, padding, dilations):
    """The entries of ``h`` at the places ``spread`` puts them."""
    (sh, sw), (span_h, span_w) = strides, _spans(w, dilations)
    top, oh = geometry(x.shape[1], w.shape[0], sh, dilations[0], padding)
    left, ow = geometry(x.shape[2], w.shape[1], sw, dilations[1], padding)
    out = np.zeros((h.shape[0], oh, ow, h.shape[3]), h.dtype)
    for i in range(oh):
        for j in range(ow):
            out[:, i, j, :] = h[:, span_h - 1 - top + i * sh, span_w - 1 - left + j * sw, :]
    return out


def _reach(x, w, strides, padding, dilations):
    """(top, rows, left, cols): the padding before and how far the windows reach."""
    (kh, kw), (sh, sw), (dh, dw) = w.shape[:2], strides, dilations
    top, oh = geometry(x.shape[1], kh, sh, dh, padding)
    left, ow = geometry(x.shape[2], kw, sw, dw, padding)
    return top, (oh - 1) * sh + (kh - 1) * dh + 1, left, (ow - 1) * sw + (kw - 1) * dw + 1


def window_pad(x, w, strides, padding, dilations):
    """Entry (r, c) is x's (r - top, c - left), 0 outside x, for the rows and columns
    the windows reach."""
    top, rows, left, cols = _reach(x, w, strides, padding, dilations)
    out = np.zeros((x.shape[0], rows, cols, x.shape[3]), x.dtype)
    for r in range(rows):
        for c in range(cols):
            if 0 <= r - top < x.shape[1] and 0 <= c - left < x.shape[2]:
                out[:, r, c, :] = x[:, r - top, c - left, :]
    return out


def window_unpad(h, x, w, strides, padding, dilations):
    """x's entry (r, c) is h's (r + top, c + left) where the windows reach it, else 0."""
    top, rows, left, cols = _reach(x, w, strides, padding, dilations)
    out = np.zeros(x.shape[:3] + h.shape[3:], h.dtype)
    for r in range(x.shape[1]):
        for c in range(x.shape[2]):
            if r + top < rows and c + left < cols:
                out[:, r, c, :] = h[:, r + top, c + left, :]
    return out


# -- pooling -------------------------------------------------------------------------
def _pool_windows(x, ksize, strides, padding, dilations=(1, 1)):
    """For each output pixel (i, j): the list of x's (row, column) in its window
    (tf.nn.pool's formula: taps ``dilations`` apart; out-of-bounds ones left out)."""
    (dh, dw), (sh, sw) = dilations, strides
    top, oh = geometry(x.shape[1], ksize[0], sh, dh, padding)
    left, ow = geometry(x.shape[2], ksize[1], sw, dw, padding)
    places = {}
    for i in range(oh):
        for j in range(ow):
            places[i, j] = [(i * sh - top + p * dh, j * sw - left + q * dw)
                            for p in range(ksize[0]) for q in range(ksize[1])
                            if 0 <= i * sh - top + p * dh < x.shape[1]
                            and 0 <= j * sw - left + q * dw < x.shape[2]]
    return places, (oh, ow)


def _pooled(x, ksize, strides, padding, dilations, reduce):
    places, (oh, ow) = _pool_windows(x, ksize, strides, padding, dilations)
    y = np.zeros((x.shape[0], oh, ow, x.shape[3]), x.dtype)
    for (i, j), where in places.items():
        y[:, i, j, :] = reduce(np.stack([x[:, r, c, :] for r, c in where]))
    return y


def max_pool2d(x, ksize, strides, padding, dilations=(1, 1)):
    """The largest entry of each window; 4-entry ksize and strides ([1, kh, kw, kc]):
    of each box of kh x kw pixels and kc channels (the channel groups do not overlap)."""
    if len(ksize) == 4:
        y = max_pool2d(x, ksize[1:3], strides[1:3], padding, dilations)
        return y.reshape(y.shape[:3] + (y.shape[3] // ksize[3], ksize[3])).max(axis=-1)
    return _pooled(x, ksize, strides, padding, dilations, lambda v: v.max(axis=0))


def avg_pool2d(x, ksize, strides, padding, dilations=(1, 1)):
    """The mean over the real entries of each window (SAME: fewer at the border)."""
    if len(ksize) == 4:   # the mean of each box (equal channel groups: mean of means)
        y = avg_pool2d(x, ksize[1:3], strides[1:3], padding, dilations)
        return y.reshape(y.shape[:3] + (y.shape[3] // ksize[3], ksize[3])).mean(axis=-1)
    return _pooled(x, ksize, strides, padding, dilations, lambda v: v.mean(axis=0))


def max_pool2d_grad(g, x, ksize, strides, padding, dilations=(1, 1)):
    places, _ = _pool_windows(x, ksize, strides, padding, dilations)
    out = np.zeros(x.shape, g.dtype)
    for (i, j), where in places.items():
        for b in range(x.shape[0]):
            for ch in range(x.shape[3]):
                r, c = max(where, key=lambda rc: x[b, rc[0], rc[1], ch])
                out[b, r, c, ch] += g[b, i, j, ch]
    return out


def max_pool2d_pick(h, x, ksize, strides, padding, dilations=(1, 1)):
    places, (oh, ow) = _pool_windows(x, ksize, strides, padding, dilations)
    out = np.zeros((x.shape[0], oh, ow, x.shape[3]), h.dtype)
    for (i, j), where in places.items():
        for b in range(x.shape[0]):
            for ch in range(x.shape[3]):
                r, c = max(where, key=lambda rc: x[b, rc[0], rc[1], ch])
                out[b, i, j, ch] = h[b, r, c, ch]
    return out


def avg_pool2d_grad(g, x, ksize, strides, padding, dilations=(1, 1)):
    places, _ = _pool_windows(x, ksize, strides, padding, dilations)
    out = np.zeros(x.shape, g.dtype)
    for (i, j), where in places.items():
        for r, c in where:
            out[:, r, c, :] += g[:, i, j, :] / len(where)
    return out


# -- cases ---------------------------------------------------------------------------
@st.composite
def conv_params(draw):
    """(x's shape, w's shape, params) for a conv2d that fits (odd sizes, size-0 batch)."""
    padding = draw(st.sampled_from(["VALID", "SAME"]))
    strides = (draw(st.integers(1, 2)), draw(st.integers(1, 3)))
    dilations = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    spans = ((kh - 1) * dilations[0] + 1, (kw - 1) * dilations[1] + 1)
    low = spans if padding == "VALID" else (1, 1)
    height = draw(st.integers(low[0], max(low[0], 4)))
    width = draw(st.integers(low[1], max(low[1], 4)))
    cin, cout = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    n = draw(st.sampled_from([1, 2, 0]))
    params = {"strides": strides, "padding": padding, "dilations": dilations}
    return (n, height, width, cin), (kh, kw, cin, cout), params


@st.composite
def conv2d_case(draw):
    xs, ws, params = draw(conv_params())
    return Case((draw(arrays(xs)), draw(arrays(ws, Domain(-1.0, 1.0)))), params)


@st.composite
def spread_case(draw):
    """spread(g, x, w): g shaped as conv2d(x, w)'s output."""
    xs, ws, params = draw(conv_params())
    x, w = draw(arrays(xs)), draw(arrays(ws))
    g = draw(arrays(conv2d(x, w, **params).shape))
    return Case((g, x, w), params)


@st.composite
def unspread_case(draw):
    """unspread(h, x, w): h shaped as spread's output."""
    xs, ws, params = draw(conv_params())
    x, w = draw(arrays(xs)), draw(arrays(ws))
    g = np.zeros(conv2d(x, w, **params).shape)
    return Case((draw(arrays(spread(g, x, w, **params).shape)), x, w), params)


@st.composite
def window_pad_case(draw):
    xs, ws, params = draw(conv_params())
    return Case((draw(arrays(xs)), draw(arrays(ws))), params)


@st.composite
def window_unpad_case(draw):
    """window_unpad(h, x, w): h shaped as window_pad's output."""
    xs, ws, params = draw(conv_params())
    x, w = draw(arrays(xs)), draw(arrays(ws))
    return Case((draw(arrays(window_pad(x, w, **params).shape)), x, w), params)


@st.composite
def pool_params(draw):
    """(x's shape, params) for a pooling that fits (dilated windows too)."""
    padding = draw(st.sampled_from(["VALID", "SAME"]))
    ksize = (draw(st.integers(1, 3)), draw(st.integers(1, 2)))
    strides = (draw(st.integers(1, 3)), draw(st.integers(1, 2)))
    dilations = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    spans = ((ksize[0] - 1) * dilations[0] + 1, (ksize[1] - 1) * dilations[1] + 1)
    low = spans if padding == "VALID" else (1, 1)
    height = draw(st.integers(low[0], max(low[0], 4)))
    width = draw(st.integers(low[1], max(low[1], 4)))
    shape = (draw(st.sampled_from([1, 2, 0])), height, width, draw(st.integers(1, 2)))
    places, _ = _pool_windows(np.zeros(shape), ksize, strides, padding, dilations)
    assume(all(places.values()))   # a dilated SAME window wholly in the padding is refused
    return shape, {"ksize": ksize, "strides": strides, "padding": padding,
                   "dilations": dilations}


@st.composite
def channel_pool_case(draw, distinct=False):
    """pool(x) with ksize [1, kh, kw, kc] and strides [1, sh, sw, kc]: windows over
    channels too (kh = kw = 1 often: channels only)."""
    padding = draw(st.sampled_from(["VALID", "SAME"]))
    kh, kw = draw(st.sampled_from([(1, 1), (1, 1), (2, 1), (1, 2), (2, 2)]))
    depth, groups = draw(st.integers(2, 3)), draw(st.integers(1, 2))
    height, width = draw(st.integers(kh, 3)), draw(st.integers(kw, 3))
    shape = (draw(st.sampled_from([1, 2])), height, width, depth * groups)
    x = draw(distinct_arrays(shape)) if distinct else draw(arrays(shape))
    sh, sw = (1, 1) if (kh, kw) == (1, 1) else (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    return Case((x,), {"ksize": [1, kh, kw, depth], "strides": [1, sh, sw, depth],
                       "padding": padding})


@st.composite
def pool_case(draw, distinct=False):
    """pool(x); ``distinct``: x's values far apart, so no window has a tie."""
    shape, params = draw(pool_params())
    x = draw(distinct_arrays(shape)) if distinct else draw(arrays(shape))
    return Case((x,), params)


@st.composite
def pool_grad_case(draw, distinct=False):
    """pool_grad(g, x): g shaped as the pooling's output."""
    shape, params = draw(pool_params())
    x = draw(distinct_arrays(shape)) if distinct else draw(arrays(shape))
    return Case((draw(arrays(avg_pool2d(x, **params).shape)), x), params)


@st.composite
def pool_pick_case(draw):
    """max_pool2d_pick(h, x): h shaped as x, x without ties."""
    shape, params = draw(pool_params())
    return Case((draw(arrays(shape)), draw(distinct_arrays(shape))), params)
