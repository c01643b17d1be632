r"""How ``conv2d``'s kernel multiplies: formulations of one sum, and the choice between
them by shape. This is below the op: the op, its rules, its drawings and the steppers see
one ``conv2d`` whichever runs here.

On a padded NHWC ``x`` and HWIO filters ``w``, each computes

$$y_{b,i,j,o} = \sum_{p,q,c} x_{b,\, i s_h + p d_h,\, j s_w + q d_w,\, c}\; w_{p,q,c,o}$$

as matrix products, since BLAS multiplies matrices far faster than anything else numpy
does. They differ in which matrices, and in what is copied to make them:

* ``windows`` (*im2col*): copy every window into a row, in the filters' ``(kh, kw, c)``
  order, and multiply the rows by the filters as one ``(kh kw c, out)`` matrix. The rows
  are ``kh kw`` times the input, so they are made **a block at a time** (about 1 MiB of
  rows: a few images, or a few output rows of one), each block multiplied while it is
  still in the cache. One block of all rows (the plain im2col) took twice as long on the
  benchmark's convolutions: its copy went out to memory and back. The choice for the
  forward pass and for the input's cotangent (the convolution with the flipped filters).
* ``windows transposed``: the filters' cotangent, a convolution whose "filter" is the
  whole output cotangent and whose output is the filters' ``kh x kw``, written as
  textbooks write it: ``cols^T @ ct``, the forward pass's im2col rows (made from the
  input as the rule hands it over) transposed, times the cotangent. One wide product
  ``(kh kw c, rows) @ (rows, out)``, a block of rows at a time. The choice in float32,
  and at steps other than 1.
* ``positions``: one matmul per output pixel ``(i, j)`` of that convolution: its window,
  all images at once, by the filters. Its windows are copied in the order they lie in
  memory (the rule hands its input over transposed, channels first), so the copy streams.
* ``row offsets``: ``positions`` with no window copied, where the steps are 1 and the
  input lies as the filters' rule hands it over: each window is then one contiguous
  slice of the input's rows (see ``row_offset_matmuls``). The filters' cotangent's
  choice in float64, where its ``kh kw`` narrow products cost no more than one wide one
  and the copy of the windows is saved; in float32 BLAS's narrow products are slow.

Three more were measured on the benchmark's convolutions and lost (``docs/performance.md``,
2026-11-27 and 2026-12-03): one matmul per tap ``(p, q)`` over the whole input with the
products added in shifted (no window copied: narrow products of ``c`` columns); the
same with the taps' products of each pixel made by one wide matmul and added in shifted
afterwards (the shifted additions cost what the wider product saved); and Winograd's
``F(2x2, 3x3)`` (16 matmuls for each 2x2 block of outputs instead of 36, on 4x4 tiles
transformed by additions): with 16 and 32 channels its transforms, one numpy pass over
the tiles for each of about 45 additions, cost more than the 2.25 times fewer
multiplications saved (the forward pass in float32: 9.7 ms against im2col's 3.1, of
which 1.8 for all 16 products; ``benchmarks/conv_formulations.py`` times them all).
``FORMULATIONS`` lets a test run each formulation on any shape.
"""
from ... import backend
from .windows import windows

#: About how many bytes of window rows ``windows_matmul`` copies before it multiplies.
BLOCK_BYTES = 1 << 20


def _blocks(n, rows, per_row_bytes):
    """``(image slice, output-row slice)`` pairs covering ``n`` images of ``rows`` output
    rows, each about ``BLOCK_BYTES`` of window rows (whole images where they fit). On a
    GPU, one block: its kernels are not cache-bound as numpy's copies are."""
    if backend.get_backend() != "numpy":
        return [(slice(None), slice(None))]
    per_image = max(rows * per_row_bytes, 1)
    if per_image <= BLOCK_BYTES:
        step = BLOCK_BYTES // per_image
        return [(slice(b, b + step), slice(None)) for b in range(0, n, step)]
    step = max(BLOCK_BYTES // max(per_row_bytes, 1), 1)
    return [(slice(b, b + 1), slice(i, i + step)) for b in range(n) for i in range(0, rows, step)]


def windows_matmul(x, w, strides, dilations, out):
    """im2col, a block at a time: the windows copied into rows (in the filters' ``(kh, kw,
    c)`` order), each block of rows times the filters as a matrix."""
    kh, kw, c, cout = w.shape
    (oh, ow), xp = out, backend.xp
    patches = windows(x, (kh, kw), strides, dilations, out)    # a view: nothing copied yet
    taps, shape = kh * kw * c, (x.shape[0], oh, ow, cout)
    filters = w.reshape(taps, cout)
    blocks = _blocks(x.shape[0], oh, ow * taps * x.itemsize)
    if len(blocks) <= 1 or taps == 0 or cout == 0:   # one block, or nothing: plain im2col
        rows = patches.transpose(0, 1, 2, 4, 5, 3).reshape(x.shape[0] * oh * ow, taps)
        return xp.matmul(rows, filters).reshape(shape)   # (sizes explicit: taps may be 0)
    total = xp.empty(shape, xp.result_type(x, w))
    for images, rows in blocks:
        block = patches[images, rows].transpose(0, 1, 2, 4, 5, 3).reshape(-1, taps)
        xp.matmul(block, filters, out=total[images, rows].reshape(-1, cout))
    return total


def position_matmuls(x, w, strides, dilations, out):
    """One matmul per output pixel: its window (all images) by the filters, the window
    copied in the order its entries lie in memory."""
    kh, kw, c, cout = w.shape
    (sh, sw), (dh, dw), (oh, ow) = strides, dilations, out
    xp = backend.xp
    # the contracted axes (1, 2, 3) of a window, outermost in memory first
    order = sorted((1, 2, 3), key=lambda axis: -abs(x.strides[axis]))
    images_inner = abs(x.strides[0]) <= min(abs(x.strides[a]) for a in order)
    filters = w.transpose([a - 1 for a in order] + [3]).reshape(kh * kw * c, cout)
    total = xp.empty((x.shape[0], oh, ow, cout), xp.result_type(x, w))
    for i in range(oh):
        for j in range(ow):
            window = x[:, i * sh:i * sh + (kh - 1) * dh + 1:dh,
                       j * sw:j * sw + (kw - 1) * dw + 1:dw, :]
            if images_inner:   # as it lies: (taps..., images), then transposed (a view)
                rows = xp.ascontiguousarray(window.transpose(order + [0]))
                rows = rows.reshape(kh * kw * c, x.shape[0]).T
            else:
                rows = window.transpose([0] + order).reshape(x.shape[0], kh * kw * c)
            total[:, i, j, :] = rows @ filters
    return total


def row_offset_matmuls(x, w, strides, dilations, out):
    """``positions`` with no window copied, for the layout the filters' rule hands over
    (``x`` a transposed view of a contiguous ``(k, h, w, m)`` array: images ``k``
    outermost, channels ``m`` innermost) at strides and dilations 1. As the array lies,
    in rows of ``m`` entries, the window of output pixel ``(i, j)`` is every row shifted
    by ``i w + j``: its matmul reads a contiguous slice of rows, against the filters laid
    into a frame of zeros of the image's size (rows outside a window meet zeros). Taken a
    block of frame rows at a time, each block read once for every pixel while it is in
    the cache. Any other layout or step: ``position_matmuls``."""
    lying = x.transpose(3, 1, 2, 0)
    if tuple(strides) != (1, 1) or tuple(dilations) != (1, 1) or not lying.flags.c_contiguous \
            or x.size == 0 or w.size == 0:
        return position_matmuls(x, w, strides, dilations, out)
    k, height, width, m = lying.shape
    kh, kw, _, cout = w.shape
    xp = backend.xp
    frame = xp.zeros((k, height, width, cout), xp.result_type(x, w))
    frame[:, :kh, :kw, :] = w.transpose(2, 0, 1, 3)
    used = (k - 1) * height * width + (kh - 1) * width + kw   # up to the last filter row
    frame, rows = frame.reshape(-1, cout)[:used], lying.reshape(-1, m)
    shifts = [i * width + j for i in range(out[0]) for j in range(out[1])]
    total = xp.zeros((len(shifts), m, cout), frame.dtype)
    block = max(BLOCK_BYTES // (4 * cout * frame.itemsize), 64)
    for start in range(0, used, block):
        stop = min(start + block, used)
        for t, shift in enumerate(shifts):
            total[t] += rows[start + shift:stop + shift].T @ frame[start:stop]
    return total.reshape(tuple(out) + (m, cout)).transpose(2, 0, 1, 3)


def transposed_windows_matmul(x, w, strides, dilations, out):
    """The filters' cotangent as textbooks write it, ``cols^T @ ct``: for the layout the
    filters' rule hands over (``x`` a transposed view of the padded input ``(k, h, w,
    m)``, ``w`` the output cotangent with its images ``m`` on axis 2), the rows are the
    *forward* convolution's im2col rows (one per image and output pixel, the window's
    ``(oh, ow, k)`` entries in it), and the result is one product of those rows,
    transposed, by the cotangent: ``(oh ow k, rows) @ (rows, out)``, a block of rows at a
    time, the blocks' products added. Any layout and steps give the right sum (the
    copy only streams slower)."""
    kh, kw, m, cout = w.shape
    (oh, ow), xp = out, backend.xp
    lying = x.transpose(3, 1, 2, 0)                     # (m, height, width, k)
    taps = oh * ow * lying.shape[3]
    total = xp.zeros((taps, cout), xp.result_type(x, w))
    if total.size == 0 or m == 0:
        return total.reshape(oh, ow, lying.shape[3], cout).transpose(2, 0, 1, 3)
    # window (i, j) of image m holds lying[m, i d + p s, j d + q s, :] at (p, q): this
    # convolution's strides and dilations trade places, as they did in the rule
    patches = windows(lying, out, dilations, strides, (kh, kw))   # (m, kh, kw, k, oh, ow)
    cotangent = w.transpose(2, 0, 1, 3)                 # (m, kh, kw, out): as ct lies
    for images, rows in _blocks(m, kh, kw * taps * x.itemsize):
        block = patches[images, rows].transpose(0, 1, 2, 4, 5, 3).reshape(-1, taps)
        total += block.T @ cotangent[images, rows].reshape(-1, cout)
    return total.reshape(oh, ow, lying.shape[3], cout).transpose(2, 0, 1, 3)


FORMULATIONS = {"windows": windows_matmul, "positions": position_matmuls,
                "row offsets": row_offset_matmuls, "windows transposed": transposed_windows_matmul}


def choose(x_shape, w_shape, strides, dilations, out, itemsize):
    """The formulation for a convolution of these shapes, its entries ``itemsize`` bytes.

    ``windows`` unless there are fewer output pixels than taps and the window rows would
    fill more than one block (on small inputs one matmul costs less Python than several).
    Then the filters' cotangent: ``windows transposed``, its one wide product, except in
    float64 at steps 1, where ``row offsets`` copies nothing and its narrow products run
    as fast (the benchmark's filters' cotangent, ``benchmarks/conv_formulations.py``:
    float32 3.2-3.7 ms against 4.7-5.0, float64 7.6-7.8 against 6.0-7.1; at steps 2,
    against ``positions``, 4.2-4.4 against 7.1-7.3 and 7.5-8.4 against 14.9-15.3).

    On a GPU always ``windows``: one im2col and one matmul beat ``oh ow`` launched
    matmuls on every convolution of the GPU benchmark
    (``benchmarks/gpu_conv_formulations.py``: the filters' cotangent 0.37 ms against
    0.84 on an H100)."""
    if backend.get_backend() != "numpy":
        return "windows"
    kh, kw, c, _ = w_shape
    fits = x_shape[1] >= (kh - 1) * dilations[0] + 1 and x_shape[2] >= (kw - 1) * dilations[1] + 1
    if 0 in x_shape or 0 in w_shape or 0 in out or not fits:
        return "windows"     # empty, or nothing fits: the reference's zeros
    rows = x_shape[0] * out[0] * out[1] * kh * kw * c   # entries of the im2col rows
    few_pixels = out[0] * out[1] < kh * kw
    if not few_pixels or rows * 4 <= BLOCK_BYTES:                  # 4: float32's bytes
        return "windows"
    steps_1 = tuple(strides) == (1, 1) and tuple(dilations) == (1, 1)
    return "row offsets" if steps_1 and itemsize >= 8 else "windows transposed"


def convolve(x, w, strides, dilations, out):
    """``conv2d`` of the padded ``x`` with ``w``: ``out = (oh, ow)`` windows, computed by
    the formulation ``choose`` picks."""
    name = choose(x.shape, w.shape, strides, dilations, out, x.itemsize)
    return FORMULATIONS[name](x, w, strides, dilations, out)
