"""Lesson 14's programs, as its cells write them: the small MLP step and the lesson-11 CNN
step that the PassStepper steps through (tests/test_pass_logs.py keeps their passes'
events as golden logs, and checks them against the optimiser's own results)."""
import numpy as np

import teachgrad as tg


def mlp_program():
    """A two-layer MLP's training step (SGD on its Variables), and a batch to trace it on."""
    rng = np.random.default_rng(0)
    W1 = tg.Variable(rng.standard_normal((4, 8)) * 0.5, name="W1")
    b1 = tg.Variable(np.zeros(8), name="b1")
    W2 = tg.Variable(rng.standard_normal((8, 3)) * 0.5, name="W2")
    b2 = tg.Variable(np.zeros(3), name="b2")
    params = [W1, b1, W2, b2]

    def mlp_step(x, y):
        with tg.GradientTape() as tape:
            h = tg.tanh(x @ W1 + b1)
            logits = h @ W2 + b2
            loss = tg.mean(tg.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        grads = tape.gradient(loss, params)
        for p, g in zip(params, grads):
            p.assign_sub(0.1 * g)
        return loss

    x, y = rng.standard_normal((16, 4)), rng.integers(0, 3, 16)
    return mlp_step, (x, y)


def cnn_program():
    """Lesson 11's CNN training step (Adam), and a batch of 8x8 images to trace it on."""
    rng = np.random.default_rng(0)

    def he(*shape):
        fan_in = int(np.prod(shape[:-1]))
        return tg.Variable(rng.standard_normal(shape) * np.sqrt(2.0 / fan_in))

    params = [he(3, 3, 1, 8), tg.Variable(np.zeros(8)), he(3, 3, 8, 16),
              tg.Variable(np.zeros(16)), he(64, 10), tg.Variable(np.zeros(10))]
    optimizer = tg.optimizers.Adam(learning_rate=0.01)

    def predict(x):
        w1, b1, w2, b2, w3, b3 = params
        h = tg.nn.relu(tg.nn.conv2d(x, w1, strides=1, padding="SAME") + b1)
        h = tg.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID")
        h = tg.nn.relu(tg.nn.conv2d(h, w2, strides=1, padding="SAME") + b2)
        h = tg.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID")
        return tg.reshape(h, (-1, 2 * 2 * 16)) @ w3 + b3

    def train_step(xb, yb):
        with tg.GradientTape() as tape:
            loss = tg.mean(tg.nn.sparse_softmax_cross_entropy_with_logits(yb, predict(xb)))
        grads = tape.gradient(loss, params)
        optimizer.apply_gradients(zip(grads, params))
        return loss

    x, y = rng.random((32, 8, 8, 1)), rng.integers(0, 10, 32)
    return train_step, (x, y)


PROGRAMS = {"mlp_step": mlp_program, "cnn_step": cnn_program}
