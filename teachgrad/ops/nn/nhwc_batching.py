"""Batching rules for the ops on NHWC images (convolution, pooling and the ops their
rules are made of), for ``tg.vectorized_map``.

Each example is already a batch of ``N`` images, and the ops treat those images one by
one. So a batch of ``B`` examples is one batch of ``B * N`` images: merge the two
leading axes, ``(B, N, H, W, C) -> (B N, H, W, C)``, apply the op once, and split the
result's leading axis again. Filters (HWIO) have no image axis: a rule that reads only
their shape takes one example's; a convolution with a batch of filters and shared
images stacks the filters along the output channels instead (one convolution, ``B``
times as many channels), and splits them back out.
"""
from ..core.apply import innermost
from ..core.grad_util import known
from ..shape.reshape import repeat_like, reshape, transpose


def merged_images_rule(op, filters=()):
    """The rule of ``op``, whose inputs are NHWC images but for those at the positions
    ``filters`` (HWIO filters: used as they are; where batched, one example's, for an
    op that reads only their shape)."""
    def rule(values, batched, **params):
        if not all(known(v.shape) for v in values):
            return NotImplemented   # the merged sizes are needed
        like = next((v for i, (v, b) in enumerate(zip(values, batched))
                     if b and i not in filters), None)
        args = [(v[0] if b else v) if i in filters else _merged(v, b, like)
                for i, (v, b) in enumerate(zip(values, batched))]
        out = innermost.process(op, *args, **params)
        if like is None:   # only the filters' shapes were batched: the same for each
            return out, False
        return reshape(out, tuple(like.shape[:2]) + tuple(out.shape[1:])), True
    return rule


def _merged(images, is_batched, like):
    """Images as ``(B N, ...)``: ``(B, N, ...)`` merged, shared ones repeated first
    (unchanged where no images are batched)."""
    if like is None:
        return images
    if not is_batched:
        images = repeat_like(images, like)
    return reshape(images, (images.shape[0] * images.shape[1],) + tuple(images.shape[2:]))


def conv_rule(op):
    """The rule of a convolution ``op(x, w, ...)``: batched images merge with N; a batch
    of filters with shared images becomes one filter bank of ``B * out`` channels. Both
    batched would be a grouped convolution, which teachgrad's has not: the loop."""
    images_rule = merged_images_rule(op, filters=(1,))

    def rule(values, batched, **params):
        (x, w), (x_batched, w_batched) = values, batched
        if not w_batched:
            return images_rule(values, batched, **params)
        if x_batched or not known(w.shape) or not known(x.shape):
            return NotImplemented
        size, kh, kw, cin, cout = w.shape
        bank = reshape(transpose(w, (1, 2, 3, 0, 4)), (kh, kw, cin, size * cout))
        out = innermost.process(op, x, bank, **params)                # (N, oh, ow, B * cout)
        out = reshape(out, tuple(out.shape[:3]) + (size, cout))
        return transpose(out, (3, 0, 1, 2, 4)), True
    return rule
