"""Lesson 13's exercises (vectorization): their contracts and checks.

Each check makes fresh inputs of two sizes or more after the answer was defined, computes
the right values from copies the answer never sees, calls the answer through
``calls.Answer`` (the guards every lesson check shares), and counts what the exercise
asks to do once: the operation's binds in a batching rule, the loss's calls in a mapped
gradient, ``f``'s calls and the recorders it runs under in a forward-mode Jacobian.
"""
import warnings

import numpy as np

from .. import autodiff, ops
from ..state import state
from ..tensor import constant
from .calls import Answer, given, tensor_result
from .contracts import Contract, register_contract
from .differences import must_match, say_difference
from .feedback import NotYet


def _check_clip_norm_batch(lesson):
    answer = Answer(CLIP_NORM_BATCH, lesson)
    op, clip_norm, clip_rows = given(lesson, "clip_norm_op", "clip_norm", "clip_rows")
    forward, binds = op.forward, []

    def counted(*args, **params):
        binds.append(1)
        return forward(*args, **params)

    def rule(values, batched, **params):
        out = answer.call(values, batched, **params)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise NotYet(f"Not yet: your rule returned {type(out).__name__} "
                         f"{str(out)[:40]}; a batching rule returns a pair, (outputs, "
                         f"out_batched): the operation applied to the whole batch, and True.")
        tensor_result(CLIP_NORM_BATCH, out[0], "the outputs your rule returned",
                      values[0].shape)
        return out
    ops.defbatch(op, rule)
    op.forward = counted
    try:
        for shape, axis, seed in [((6, 3, 4), None, 7), ((6, 3, 4), 0, 8), ((5, 3, 4), -1, 9),
                                  ((6, 3, 4), (0, 1), 10), ((7, 5), None, 11)]:
            _one_batch(clip_norm, shape, axis, seed, binds)
        batch = np.random.default_rng(12).standard_normal((4, 3)) * 2
        weights = constant(np.random.default_rng(13).standard_normal((4, 3)))
        loop = [autodiff.grad(lambda e: ops.sum(clip_rows(e) * weights[i]))(
            constant(batch[i])).numpy() for i in range(4)]
        mapped = autodiff.grad(lambda b: ops.sum(autodiff.vmap(clip_rows)(b) * weights))(
            constant(batch.copy()))
        must_match(tensor_result(CLIP_NORM_BATCH, mapped, "the gradient of a sum over "
                                 "tg.vmap(clip_norm)", (4, 3)), np.stack(loop),
                   "the gradient of a sum over tg.vmap(clip_norm)",
                   "compute the result with tg.ops.bind on the batch (a teachgrad operation), "
                   "not with numpy, so that a tape outside the map records it.")
    except BaseException:
        ops.defbatch(op, None)       # back to the fallback loop
        raise
    finally:
        op.forward = forward
    return ("clip_norm's batching rule: every example matches the loop, one bind per batch, "
            "and gradients flow through it")


def _one_batch(clip_norm, shape, axis, seed, binds):
    about = f"tg.vmap(clip_norm) over a batch of shape {shape}, axis={axis}"
    batch = np.random.default_rng(seed).standard_normal(shape) * 2
    expected = np.stack([clip_norm(constant(batch[i].copy()), 1.0, axis=axis).numpy()
                         for i in range(shape[0])])
    binds.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = autodiff.vmap(lambda m: clip_norm(m, 1.0, axis=axis))(constant(batch))
        except NotYet:
            raise
        except Exception as error:      # noqa: BLE001 -- the pair was not what vmap takes
            raise NotYet(f"Not yet: {about} raised {type(error).__name__}: {error}. Hint: a "
                         f"batching rule returns a pair, (outputs, out_batched): the "
                         f"operation applied to the whole batch, and whether the result is "
                         f"batched.") from None
    if any("no batching rule" in str(w.message) for w in caught):
        raise NotYet(f"Not yet: {about} still ran once per example, in the fallback loop: "
                     f"your rule returned NotImplemented. Return (outputs, out_batched).")
    if len(binds) > 1:
        raise NotYet(f"Not yet: {about}: your rule called clip_norm's operation {len(binds)} "
                     f"times, once per example. Compute the whole batch with one "
                     f"tg.ops.bind(clip_norm_op, ...) call.")
    if not binds:
        raise NotYet(f"Not yet: {about}: your rule never called clip_norm's operation on the "
                     f"batch it was given. Compute the result with one "
                     f"tg.ops.bind(clip_norm_op, ...) call on the batch (not with numpy, nor "
                     f"a result made before).")
    array = tensor_result(CLIP_NORM_BATCH, got, about, expected.shape)
    if not np.allclose(array, expected):
        raise NotYet(f"Not yet: {about}: {say_difference(array, expected)}, where an example "
                     f"is a row. Hint: the batch has one more axis than an example, in front; "
                     f"an example's axis a is the batch's axis a + 1. Which axes should the "
                     f"norm be taken over, so that it never mixes two examples?")


def _check_clipped_mean_gradient(lesson):
    answer = Answer(CLIPPED_MEAN_GRADIENT, lesson)
    loss, = given(lesson, "loss")
    for n, max_norm, seed in [(64, 0.8, 1), (9, 0.5, 2)]:
        rng = np.random.default_rng(seed)
        labels = rng.integers(0, 2, n)
        points = rng.standard_normal((n, 2)) + np.where(labels[:, None] == 1, 1.5, -1.5)
        X, Y = np.column_stack([points, np.ones(n)]), labels.astype(float)
        w = np.zeros(3) if seed == 1 else rng.standard_normal(3)
        grads = np.stack([autodiff.grad(loss)(constant(w), constant(X[i]),
                                              constant(Y[i])).numpy() for i in range(n)])
        scale = np.minimum(1.0, max_norm / np.linalg.norm(grads, axis=1))
        expected = (grads * scale[:, None]).mean(axis=0)
        calls = []

        def counted_loss(w, x, y):
            calls.append(1)
            return loss(w, x, y)
        about = f"your clipped mean gradient over {n} examples, at w = {np.round(w, 3)}"
        got = answer.call(counted_loss, constant(w.copy()), constant(X.copy()),
                          constant(Y.copy()), max_norm)
        array = tensor_result(CLIPPED_MEAN_GRADIENT, got, about)
        if array.shape == grads.shape:
            raise NotYet(f"Not yet: your function returned one gradient per example, shape "
                         f"{array.shape}. Average the clipped gradients over the examples, to "
                         f"one gradient of shape {expected.shape}.")
        array = tensor_result(CLIPPED_MEAN_GRADIENT, got, about, expected.shape)
        unclipped = grads.mean(axis=0)
        clipped_mean = unclipped * min(1.0, max_norm / np.linalg.norm(unclipped))
        for slip, value in [("the mean of the per-example gradients, not clipped. Clip each "
                             "example's gradient to norm max_norm before averaging", unclipped),
                            ("the mean gradient, clipped. DP-SGD clips each example's "
                             "gradient first, then averages: the order matters", clipped_mean)]:
            if np.allclose(array, value) and not np.allclose(array, expected):
                raise NotYet(f"Not yet: your result is {slip}.")
        must_match(array, expected, about, "clip the norm of each example's whole gradient "
                   "(every axis of one example), then take the mean over the examples.")
        if len(calls) > 1:
            raise NotYet(f"Not yet: the numbers are right, but your function called the loss "
                         f"{len(calls)} times: a loop over the examples. Map tg.grad(loss) "
                         f"over the batch with tg.vmap, so that the loss is traced once.")
    return "the clipped mean gradient is right, on 64 examples and on 9, computed in one pass"


def _check_jacobian_forward(lesson):
    answer = Answer(JACOBIAN_FORWARD, lesson, forbid=("jacfwd", "jacrev",
                                                      "hessian"))
    for m, n, seed, kind in [(5, 7, 21, "tanh"), (9, 4, 22, "sin")]:
        rng = np.random.default_rng(seed)
        A, x = rng.standard_normal((m, n)) / 2, rng.standard_normal(n)
        slope = 1 - np.tanh(A @ x) ** 2 if kind == "tanh" else 2 * np.cos(A @ x)
        exact = slope[:, None] * A
        calls, recorders = [], set()
        A_t = constant(A)

        def f(v):
            calls.append(1)
            recorders.update(type(r).__name__ for r in state.recorders)
            return ops.tanh(A_t @ v) if kind == "tanh" else ops.sin(A_t @ v) * 2.0
        about = f"your Jacobian of a function from {n} numbers to {m}"
        got = answer.call(f, constant(x.copy()))
        if tuple(getattr(got, "shape", None) or ()) == exact.T.shape:
            raise NotYet(f"Not yet: {about} has shape {tuple(got.shape)}, the transpose of "
                         f"the {exact.shape} one: vmap stacked the columns J e_j along axis "
                         f"0, as rows. Put the batch axis where the columns go (out_axes), or "
                         f"transpose.")
        array = tensor_result(JACOBIAN_FORWARD, got, about, exact.shape)
        must_match(array, exact, about, "the JVP with tangent e_j is column j of the "
                   "Jacobian; map over the rows of an identity matrix of x's size.")
        if "GradientTape" in recorders:
            raise NotYet("Not yet: the numbers are right, but f ran on a GradientTape: that "
                         "is reverse mode (VJPs). This exercise builds the Jacobian from "
                         "forward-mode JVPs, tg.jvp, mapped with tg.vmap.")
        if len(calls) > 2:
            raise NotYet(f"Not yet: the numbers are right, but your function called f "
                         f"{len(calls)} times: a loop of JVPs, one per column. Map tg.jvp "
                         f"over the rows of the identity with tg.vmap, so that f runs once.")
    return "forward-mode Jacobian is right, for f of 7 numbers to 5 and of 4 to 9"


CLIP_NORM_BATCH = register_contract(Contract(
    "clip_norm_batch", lesson=13, number=1, kind="rule", cell="l13-ex1-check",
    check=_check_clip_norm_batch,
    expect="the batching rule clip_norm_batch(values, batched, max_norm, axes), returning "
           "(outputs, out_batched)",
    forbidden={
        "one bind per example": (
            "def clip_norm_batch(values, batched, max_norm, axes):\n"
            "    x, = values\n"
            "    return tg.stack([tg.ops.bind(clip_norm_op, x[i], max_norm=max_norm, axes=axes)\n"
            "                     for i in range(x.shape[0])]), True\n"),
        "halves the batch in place": (
            "def clip_norm_batch(values, batched, max_norm, axes):\n"
            "    x, = values\n"
            "    x.numpy()[...] *= 0.5\n"
            "    return tg.ops.bind(clip_norm_op, x, max_norm=max_norm,\n"
            "                       axes=tuple(a + 1 for a in axes)), True\n"),
        "numpy, not an op": (
            "def clip_norm_batch(values, batched, max_norm, axes):\n"
            "    x, = values\n"
            "    return tg.constant(_clip_norm(x.numpy(), max_norm,\n"
            "                                  tuple(a + 1 for a in axes))), True\n")},
    accepted={
        "the batch taken as values[0], out_batched as batched[0]": (
            "def clip_norm_batch(values, batched, max_norm, axes):\n"
            "    x = values[0]\n"
            "    return tg.ops.bind(clip_norm_op, x, max_norm=max_norm,\n"
            "                       axes=tuple(sorted(a + 1 for a in axes))), batched[0]\n")}))

CLIPPED_MEAN_GRADIENT = register_contract(Contract(
    "clipped_mean_gradient", lesson=13, number=2, kind="function", cell="l13-ex2-check",
    check=_check_clipped_mean_gradient,
    expect="a function (loss, w, X, Y, max_norm) that returns the mean of the per-example "
           "gradients, each clipped to norm max_norm",
    forbidden={
        "a loop over the examples": (
            "def clipped_mean_gradient(loss, w, X, Y, max_norm):\n"
            "    grads = [clip_norm(tg.grad(loss)(w, X[i], Y[i]), max_norm)\n"
            "             for i in range(X.shape[0])]\n"
            "    return tg.mean(tg.stack(grads), axis=0)\n"),
        "zeroes X in place, returns zeros": (
            "def clipped_mean_gradient(loss, w, X, Y, max_norm):\n"
            "    X.numpy()[...] = 0.0\n"
            "    return tg.zeros(w.shape)\n"),
        "scales X by 0.5 in place first": (
            "_solution = clipped_mean_gradient\n"
            "def clipped_mean_gradient(loss, w, X, Y, max_norm):\n"
            "    X.numpy()[...] *= 0.5\n"
            "    return _solution(loss, w, X, Y, max_norm)\n"),
        "clips the mean, not each example": (
            "def clipped_mean_gradient(loss, w, X, Y, max_norm):\n"
            "    per_example = tg.vmap(tg.grad(loss), in_axes=(None, 0, 0))(w, X, Y)\n"
            "    return clip_norm(tg.mean(per_example, axis=0), max_norm)\n")},
    accepted={
        "clipped with tg.vmap over the clip as a function of one gradient": (
            "def clipped_mean_gradient(loss, w, X, Y, max_norm):\n"
            "    def one(x, y):\n"
            "        return clip_norm(tg.grad(loss)(w, x, y), max_norm)\n"
            "    return tg.mean(tg.vmap(one)(X, Y), axis=0)\n")}))

JACOBIAN_FORWARD = register_contract(Contract(
    "jacobian_forward", lesson=13, number=3, kind="function", cell="l13-ex3-check",
    check=_check_jacobian_forward,
    expect="a function (f, x) that returns the Jacobian of f at x, from JVPs mapped with "
           "tg.vmap",
    forbidden={
        "returns the lesson's J_vmap": "def jacobian_forward(f, x):\n    return J_vmap\n",
        "a loop of JVPs": (
            "def jacobian_forward(f, x):\n"
            "    eye = np.eye(x.shape[0])\n"
            "    return tg.stack([tg.jvp(f, [x], [tg.constant(eye[j])])[1]\n"
            "                     for j in range(x.shape[0])], axis=1)\n"),
        "reverse mode": (
            "def jacobian_forward(f, x):\n"
            "    y, vjp_fn = tg.vjp(f, x)\n"
            "    return tg.vmap(lambda ct: vjp_fn(ct)[0])(tg.constant(np.eye(y.shape[0])))\n"),
        "tg.jacfwd": "def jacobian_forward(f, x):\n    return tg.jacfwd(f)(x)\n"},
    accepted={
        "vmap's rows, transposed": (
            "def jacobian_forward(f, x):\n"
            "    eye = tg.constant(np.eye(x.shape[0]))\n"
            "    rows = tg.vmap(lambda t: tg.jvp(f, [x], [t])[1])(eye)\n"
            "    return tg.transpose(rows)\n")}))
