"""Lesson 12's exercises (backpropagation through time): their contracts and checks.

Each check makes fresh inputs of two sizes or more after the answer was defined, computes
the right values from copies the answer never sees, and calls the answer through
``calls.Answer``, which holds the guards every lesson check shares.
"""
import numpy as np

from .. import autodiff, ops
from ..tensor import Variable, constant
from .calls import Answer, given, run_needed, undefined
from .contracts import Contract, register_contract
from .differences import must_match
from .feedback import NotYet
from .prediction import check_prediction, check_words

_STEP_HINT = ("h_t = tanh(h W + x_t U + b): the previous state times W, the input times U, "
              "and the bias, all inside one tanh.")


def _check_rnn_step(lesson):
    answer = Answer(RNN_STEP, lesson)
    for batch, hidden, inputs, seed in [(2, 16, 1, 7), (5, 3, 2, 8)]:
        rng = np.random.default_rng(seed)
        shapes = [(hidden, hidden), (inputs, hidden), (hidden,), (hidden, 1), (1,)]
        arrays = [0.5 * rng.standard_normal(s) for s in shapes]
        h, x = rng.standard_normal((batch, hidden)), rng.standard_normal((batch, inputs))
        W, U, b = arrays[:3]
        expected = np.tanh(h @ W + x @ U + b)
        slips = {"the bias b is missing": np.tanh(h @ W + x @ U),
                 "the input's term x_t U is missing": np.tanh(h @ W + b),
                 "the previous state's term h W is missing": np.tanh(x @ U + b),
                 "W is transposed: the state is a row, so it is h @ W":
                     np.tanh(h @ W.T + x @ U + b),
                 "the tanh is missing": h @ W + x @ U + b}
        params = [Variable(a.copy(), name=n) for a, n in zip(arrays, "WUbVc")]
        about = f"the new state rnn_step returned (a batch of {batch}, {hidden} units)"
        with autodiff.GradientTape() as tape:
            got = answer.call(params, constant(h.copy()), constant(x.copy()))
        array = answer.tensor(got, about, expected.shape)
        for slip, value in slips.items():
            if np.allclose(array, value) and not np.allclose(value, expected):
                raise NotYet(f"Not yet: the new state rnn_step returned is off: {slip}.")
        must_match(array, expected, about, _STEP_HINT)
        missing = [p.name for p, g in zip(params[:3], tape.gradient(got, params[:3]))
                   if g is None]
        if missing:
            raise NotYet(f"Not yet: the gradient does not reach {missing}: use the Variables "
                         f"of params, not copies of their values.")
    return "rnn_step is right, on batches of 2 and of 5, and the gradient reaches W, U and b"


def _check_predicted_fate(lesson):
    if PREDICTED_FATE.name not in lesson:
        raise NotYet(undefined(PREDICTED_FATE))
    predicted = lesson[PREDICTED_FATE.name]
    params, hidden, Q, xs, ys, norms = given(lesson, "params", "HIDDEN", "Q", "xs", "ys",
                                              "state_gradient_norms")
    check_words(predicted, PREDICTED_FATE)
    run_needed(PREDICTED_FATE, lesson, params, ops.zeros((1, hidden)), ops.zeros((1, 1)))

    def fate(ratio):
        return "vanishes" if ratio < 0.1 else "explodes" if ratio > 10 else "neither"
    ratios = {}
    for s in [0.5, 1.0, 2.0, 4.0]:
        n = norms(constant(s * Q), xs, ys)
        ratios[s] = n[0] / n[-1]
    check_prediction(
        predicted, {s: fate(r) for s, r in ratios.items()},
        about="what happens to the gradient over 23 steps",
        hint="each step multiplies the gradient's length by at most s, times the tanh slopes "
             "1 - h^2, which are below 1 wherever h is not 0.",
        hints={1.0: "with s = 1 only the tanh slopes are left, and each is at most 1",
               0.5: "a factor of at most 0.5, 23 times",
               2.0: "the tanh slopes shrink it, but not by half at every step",
               4.0: "a factor of up to 4 at every step"})
    return "\n".join(f"s = {s}: ||dL/dh_1|| / ||dL/dh_T|| = {r:.1e}: {fate(r)}"
                     for s, r in ratios.items())


def _check_truncated_loss(lesson):
    answer = Answer(TRUNCATED_LOSS, lesson)
    params, hidden, run_rnn, readout, loss_fn, sines = given(
        lesson, "params", "HIDDEN", "run_rnn", "readout", "loss_fn", "noisy_sines")
    run_needed(TRUNCATED_LOSS, lesson, params, ops.zeros((1, hidden)), ops.zeros((1, 1)))

    def copies(seed):
        rng = np.random.default_rng(seed)
        return [Variable(p.numpy() + 0.1 * rng.standard_normal(p.shape), name=p.name)
                for p in params]

    def gradients(loss, ps):
        return np.concatenate([g.numpy().ravel() for g in loss.tape.gradient(
            loss.value, ps, unconnected_gradients="zero")])

    for steps, batch, k, seed in [(10, 3, 4, 11), (24, 8, 6, 12), (24, 8, 24, 12)]:
        xs, ys = sines(batch, steps, np.random.default_rng(seed))
        xs_np, ys_np = xs.numpy(), ys.numpy()
        full = _Taped(lambda ps: loss_fn(ps, constant(xs_np), constant(ys_np)), copies(seed))
        chunked = _Taped(lambda ps: _chunked_loss(ps, xs_np, ys_np, k, run_rnn, readout,
                                                  hidden), copies(seed))
        expected_value = float(full.value.numpy())
        ps = copies(seed)
        about = f"truncated_loss with k = {k} on {batch} sequences of {steps} steps"
        with autodiff.GradientTape() as tape:
            got = answer.call(ps, constant(xs_np.copy()), constant(ys_np.copy()), k)
        value = answer.tensor(got, f"the value of {about}", ())
        must_match(value, np.array(expected_value), f"the value of {about}",
                   "truncation changes the gradient, not the value: carry the state's value "
                   "from each chunk into the next, and add up the squared errors of every "
                   "step of every chunk.")
        grad = np.concatenate([g.numpy().ravel() for g in tape.gradient(
            got, ps, unconnected_gradients="zero")])
        if k < steps and np.allclose(grad, gradients(full, full.params), rtol=1e-9,
                                     atol=1e-12):
            raise NotYet(f"Not yet: with k = {k} your gradient is full BPTT's: the gradient "
                         f"still flows from each chunk into the one before it. Hint: the "
                         f"state you carry into the next chunk should keep its value but not "
                         f"its history.")
        must_match(grad, gradients(chunked, chunked.params), f"the gradient of {about}",
                   "run each chunk from the state the previous chunk ended in, stop the "
                   "gradient there, and add the squared errors.")
    return ("truncated_loss is right: the same value as loss_fn; with k equal to the number "
            "of steps the full gradient, with a smaller k the truncated one")


class _Taped:
    """``loss(params)`` computed on a tape of its own."""

    def __init__(self, loss, params):
        self.params = params
        with autodiff.GradientTape() as self.tape:
            self.value = loss(params)


def _chunked_loss(params, xs, ys, k, run_rnn, readout, hidden):
    """The truncated loss as the check computes it: each chunk from the state the forward
    pass reached, as a constant."""
    steps, batch = xs.shape[0], xs.shape[1]
    h, total = ops.zeros((batch, hidden)), 0.0
    for start in range(0, steps, k):
        hs = run_rnn(params, constant(xs[start:start + k]), h)
        total = total + ops.sum((readout(params, hs) - constant(ys[start:start + k])) ** 2)
        h = constant(hs.numpy()[-1])
    return total / (steps * batch)


RNN_STEP = register_contract(Contract(
    "rnn_step", lesson=12, number=1, kind="function", cell="l12-ex1-check", check=_check_rnn_step,
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
    check=_check_predicted_fate,
    expect='a dict from each scale (0.5, 1.0, 2.0, 4.0) to "vanishes", "explodes" or '
           '"neither"',
    words=("vanishes", "explodes", "neither"), needs=(("rnn_step", 1),),
    forbidden={"a typo": 'predicted_fate = {0.5: "vanish", 1.0: "vanishes", '
                         '2.0: "explodes", 4.0: "explodes"}\n'}))

TRUNCATED_LOSS = register_contract(Contract(
    "truncated_loss", lesson=12, number=3, kind="function", cell="l12-ex3-check",
    check=_check_truncated_loss,
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
