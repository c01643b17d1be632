"""Lesson 12's exercises (backpropagation through time): their contracts and checks."""
from .contracts import Contract, register_contract

RNN_STEP = register_contract(Contract(
    "rnn_step", lesson=12, number=1, kind="function", cell="l12-ex1-check",
    expect="a function rnn_step(params, h, x_t) returning the new state h_t, of shape "
           "(batch, 16)",
    forbidden={
        "adds 0.25 to h.numpy() in place": (
            "def rnn_step(params, h, x_t):\n"
            "    W, U, b, V, c = params\n"
            "    h.numpy()[...] += 0.25\n"
            "    return tg.tanh(h @ W + x_t @ U + b)\n"),
        "adds 0.25 to x_t.numpy() in place": (
            "def rnn_step(params, h, x_t):\n"
            "    W, U, b, V, c = params\n"
            "    x_t.numpy()[...] += 0.25\n"
            "    return tg.tanh(h @ W + x_t @ U + b)\n"),
        "no return": (
            "def rnn_step(params, h, x_t):\n"
            "    W, U, b, V, c = params\n"
            "    h_t = tg.tanh(h @ W + x_t @ U + b)\n"),
        "numbers from numpy, not a tensor the tape sees": (
            "def rnn_step(params, h, x_t):\n"
            "    W, U, b, V, c = params\n"
            "    return tg.constant(np.tanh(h.numpy() @ W.numpy() + x_t.numpy() @ U.numpy()\n"
            "                               + b.numpy()))\n")},
    accepted={
        "the textbook order, with transposes": (
            "def rnn_step(params, h, x_t):\n"
            "    W, U, b, V, c = params\n"
            "    return tg.tanh(tg.transpose(tg.transpose(W) @ tg.transpose(h))\n"
            "                   + x_t @ U + b)\n")}))

PREDICTED_FATE = register_contract(Contract(
    "predicted_fate", lesson=12, number=2, kind="prediction", cell="l12-ex2-check",
    expect='a dict from each scale (0.5, 1.0, 2.0, 4.0) to "vanishes", "explodes" or '
           '"neither"',
    words=("vanishes", "explodes", "neither"), needs=(("rnn_step", 1),),
    forbidden={"a typo": 'predicted_fate = {0.5: "vanish", 1.0: "vanishes", '
                         '2.0: "explodes", 4.0: "explodes"}\n'}))

TRUNCATED_LOSS = register_contract(Contract(
    "truncated_loss", lesson=12, number=3, kind="function", cell="l12-ex3-check",
    expect="a function truncated_loss(params, xs, ys, k): the mean squared error, with the "
           "gradient stopped every k steps",
    needs=(("rnn_step", 1),),
    forbidden={
        "full BPTT, no cut": (
            "def truncated_loss(params, xs, ys, k):\n"
            "    return loss_fn(params, xs, ys)\n"),
        "halves xs in place": (
            "_solution = truncated_loss\n"
            "def truncated_loss(params, xs, ys, k):\n"
            "    xs.numpy()[...] *= 0.5\n"
            "    return _solution(params, xs, ys, k)\n")},
    accepted={
        "the cut made with .numpy()": (
            "def truncated_loss(params, xs, ys, k):\n"
            "    steps, batch = xs.shape[0], xs.shape[1]\n"
            "    h = tg.zeros((batch, HIDDEN))\n"
            "    total = 0.0\n"
            "    for start in range(0, steps, k):\n"
            "        hs = run_rnn(params, xs[start:start + k], h)\n"
            "        total = total + tg.sum((readout(params, hs) - ys[start:start + k]) ** 2)\n"
            "        h = tg.constant(hs[-1].numpy())\n"
            "    return total / (steps * batch)\n")}))
