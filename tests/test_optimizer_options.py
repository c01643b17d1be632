"""Keras 3's options on every optimizer (weight_decay, clipnorm, clipvalue,
global_clipnorm) and Adam(amsgrad=True), against Keras's update rules written out in
numpy, over several steps, eagerly and inside tg.function, with two Variables (so
global_clipnorm clips them together)."""
import numpy as np
import pytest

import teachgrad as tg

STEPS = 5
W0 = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, -1.5]])
B0 = np.array([0.25, -4.0])


def _loss(w, b):
    """sum(w^4)/4 + sum(sin w) + sum(b^3)/3: gradients that change from step to step."""
    return (tg.sum(tg.square(tg.square(w))) / 4.0 + tg.sum(tg.sin(w))
            + tg.sum(b * b * b) / 3.0)


def _grads(w, b):
    return [w ** 3 + np.cos(w), b * b]


def _clip(grads, clipnorm=None, clipvalue=None, global_clipnorm=None):
    """Keras 3's BaseOptimizer._clip_gradients."""
    if clipnorm:
        return [g * clipnorm / max(np.sqrt(np.sum(g * g)), clipnorm) for g in grads]
    if global_clipnorm:
        norm = np.sqrt(sum(np.sum(g * g) for g in grads))
        return [g * (global_clipnorm * min(1.0 / norm, 1.0 / global_clipnorm))
                for g in grads]
    if clipvalue:
        return [np.clip(g, -clipvalue, clipvalue) for g in grads]
    return grads


def sgd_step(lr, momentum=0.0, nesterov=False):
    def step(g, w, slots, t):
        if momentum == 0:
            return w - lr * g
        v = slots.setdefault("v", np.zeros_like(w))
        slots["v"] = v = momentum * v - lr * g
        return w + (momentum * v - lr * g if nesterov else v)
    return lr, step


def adam_step(lr, b1=0.9, b2=0.999, eps=1e-7, amsgrad=False):
    def step(g, w, slots, t):
        m = slots.get("m", np.zeros_like(w)) + (1 - b1) * (g - slots.get("m", 0.0 * w))
        v = slots.get("v", np.zeros_like(w)) + (1 - b2) * (g * g - slots.get("v", 0.0 * w))
        slots["m"], slots["v"] = m, v
        if amsgrad:
            slots["vhat"] = v = np.maximum(slots.get("vhat", np.zeros_like(w)), v)
        alpha = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        return w - m * alpha / (np.sqrt(v) + eps)
    return lr, step


def reference(rule, weight_decay=None, **clipping):
    """Keras 3's BaseOptimizer.apply: clip, decay every variable, then update_step."""
    lr, step = rule
    values, slots = [W0.copy(), B0.copy()], [{}, {}]
    for t in range(1, STEPS + 1):
        grads = _clip(_grads(*values), **clipping)
        if weight_decay is not None:
            values = [w - w * weight_decay * lr for w in values]
        values = [step(g, w, s, t) for g, w, s in zip(grads, values, slots)]
    return values


CASES = {
    "sgd_wd": (lambda: tg.optimizers.SGD(0.05, weight_decay=0.1),
               lambda: reference(sgd_step(0.05), weight_decay=0.1)),
    "momentum_clipnorm": (lambda: tg.optimizers.SGD(0.05, momentum=0.9, clipnorm=1.0),
                          lambda: reference(sgd_step(0.05, 0.9), clipnorm=1.0)),
    "nesterov_global": (
        lambda: tg.optimizers.SGD(0.05, momentum=0.5, nesterov=True, global_clipnorm=2.0),
        lambda: reference(sgd_step(0.05, 0.5, True), global_clipnorm=2.0)),
    "sgd_clipvalue_wd": (lambda: tg.optimizers.SGD(0.05, clipvalue=0.5, weight_decay=0.2),
                         lambda: reference(sgd_step(0.05), 0.2, clipvalue=0.5)),
    "adam_amsgrad": (lambda: tg.optimizers.Adam(0.1, amsgrad=True),
                     lambda: reference(adam_step(0.1, amsgrad=True))),
    "adam_amsgrad_hyper": (
        lambda: tg.optimizers.Adam(0.05, beta_1=0.5, beta_2=0.6, amsgrad=True),
        lambda: reference(adam_step(0.05, 0.5, 0.6, amsgrad=True))),
    "adam_wd_clipnorm": (lambda: tg.optimizers.Adam(0.1, weight_decay=0.05, clipnorm=0.5),
                         lambda: reference(adam_step(0.1), 0.05, clipnorm=0.5)),
    "adam_global": (lambda: tg.optimizers.Adam(0.1, global_clipnorm=1.0, amsgrad=True),
                    lambda: reference(adam_step(0.1, amsgrad=True), global_clipnorm=1.0)),
    "adam_clipvalue": (lambda: tg.optimizers.Adam(0.1, clipvalue=0.3),
                       lambda: reference(adam_step(0.1), clipvalue=0.3)),
}


def _step(opt, w, b):
    with tg.GradientTape() as tape:
        loss = _loss(w, b)
    opt.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
    return loss


def _check(w, b, expected):
    np.testing.assert_allclose(w.numpy(), expected[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b.numpy(), expected[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", CASES)
def test_eager_steps_match_keras_rule(case):
    make, expected = CASES[case]
    opt, w, b = make(), tg.Variable(W0, name="w"), tg.Variable(B0, name="b")
    for _ in range(STEPS):
        _step(opt, w, b)
    _check(w, b, expected())


@pytest.mark.parametrize("case", CASES)
def test_recorded_and_traced_steps_match_keras_rule(case):
    make, expected = CASES[case]
    opt, w, b = make(), tg.Variable(W0, name="w"), tg.Variable(B0, name="b")
    for _ in range(2):
        with tg.GradientTape():
            _step(opt, w, b)
    traced = tg.function(lambda: _step(opt, w, b))
    for _ in range(STEPS - 2):
        traced()
    assert traced.trace_count == 1
    _check(w, b, expected())


def test_clipping_changes_the_steps_and_a_zero_gradient_is_left_alone():
    assert not np.allclose(reference(sgd_step(0.05), clipnorm=1.0)[0],
                           reference(sgd_step(0.05))[0])
    for kwargs in ({"clipnorm": 1.0}, {"global_clipnorm": 1.0}, {"clipvalue": 1.0}):
        w = tg.Variable([0.0, 0.0])
        tg.optimizers.SGD(0.1, **kwargs).apply_gradients([(tg.constant([0.0, 0.0]), w)])
        assert w.numpy().tolist() == [0.0, 0.0]


def test_amsgrad_keeps_the_largest_second_moment():
    opt, w = tg.optimizers.Adam(0.1, beta_2=0.5, amsgrad=True), tg.Variable([1.0])
    for g in (4.0, 0.0):
        opt.apply_gradients([(tg.constant([g]), w)])
    assert opt.get_slot(w, "vhat").numpy()[0] == 8.0        # (1 - 0.5) * 16
    assert opt.get_slot(w, "v").numpy()[0] == 4.0
    with pytest.raises(ValueError, match="slot_name"):
        tg.optimizers.Adam(0.1).get_slot(w, "vhat")


def test_float32_variables_stay_float32_with_every_option():
    w = tg.Variable(W0.astype(np.float32))
    b = tg.Variable(B0.astype(np.float32))
    opt = tg.optimizers.Adam(0.1, amsgrad=True, weight_decay=0.05, global_clipnorm=1.0)
    for _ in range(STEPS):
        _step(opt, w, b)
    assert w.dtype == np.float32 and b.dtype == np.float32
    expected = reference(adam_step(0.1, amsgrad=True), 0.05, global_clipnorm=1.0)
    np.testing.assert_allclose(w.numpy(), expected[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("make, argument", [
    (lambda: tg.optimizers.SGD(0.1, weight_decay=-1.0), "weight_decay"),
    (lambda: tg.optimizers.SGD(0.1, clipnorm="big"), "clipnorm"),
    (lambda: tg.optimizers.Adam(clipvalue=-0.5), "clipvalue"),
    (lambda: tg.optimizers.Adam(global_clipnorm=float("inf")), "global_clipnorm"),
    (lambda: tg.optimizers.Adam(amsgrad="yes"), "amsgrad"),
    (lambda: tg.optimizers.SGD(clipnorm=1.0, global_clipnorm=1.0), "global_clipnorm"),
    (lambda: tg.optimizers.Adam(clipnorm=1.0, clipvalue=1.0), "clipvalue"),
    (lambda: tg.optimizers.Adam(clipvalue=1.0, global_clipnorm=1.0), "global_clipnorm"),
])
def test_bad_options_are_refused_naming_them(make, argument):
    with pytest.raises((TypeError, ValueError), match=f"`{argument}`"):
        make()
