"""Lesson 13's exercises (vectorization): their contracts and checks."""
from .contracts import Contract, register_contract

CLIP_NORM_BATCH = register_contract(Contract(
    "clip_norm_batch", lesson=13, number=1, kind="rule", cell="l13-ex1-check",
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
            "    rows = tg.vmap(lambda t: tg.jvp(f, [x], [t])[1])(tg.constant(np.eye(x.shape[0])))\n"
            "    return tg.transpose(rows)\n")}))
