"""Per-example gradients of the medium MLP loss, written once per library.

The problem is ``mlp_medium.py``'s (``mlp_gradient.make_problem``, config A:
784-256-256-10, batch 64, float64). One example's loss is that loss on a batch of
one, ``-sum(onehot * log_softmax(logits))``, so the batch loss is the mean of the
64 per-example losses. Its gradient with respect to every weight and bias, for each
example, stacked along a new first axis: dW1 is (64, 784, 256), and so on; 64 times
the output of one batch gradient (about 104 MB in float64, most of it dW1).

The label is picked with the one-hot row (multiply and sum) in every library:
teachgrad's ``logp[label]`` with a label that varies per example is not batched
correctly by ``tg.vmap`` (it returns the whole row), and ``tg.gather`` has no
batching rule (it would run once per example).

Each class offers ``per_example()`` (the stacked gradients, one array per
parameter) and ``host(result)`` (numpy arrays for the checks); a peer that is not
installed raises ``mlp_peers.Unavailable``.
"""
import numpy as np

import common
import mlp_gradient as mlp
import mlp_peers
import teachgrad as tg


def numpy_per_example(p):
    """The floor: hand-written numpy, one batched forward pass and a backward pass
    whose weight gradients are per-example outer products (broadcast multiplies)."""
    Ws = p.weights[0::2]
    hs, d = mlp_peers.activations(p)                        # d: (64, 10), no 1/N per example
    grads = [None] * len(p.weights)
    for i in reversed(range(len(Ws))):
        grads[2 * i] = hs[i][:, :, None] * d[:, None, :]    # (64, fan_in, fan_out)
        grads[2 * i + 1] = d
        if i:
            d = (d @ Ws[i].T) * (1 - hs[i] * hs[i])
    return grads


class Teachgrad:
    """``tg.vmap(tg.grad(loss, argnums=...))``, eagerly and in a ``tg.function``, a Python loop of ``tg.grad`` over the
    examples (stacked with ``tg.stack``), and the ordinary batch gradient."""
    name = "teachgrad"

    def __init__(self, p):
        self.p = p
        self.params = [tg.constant(w) for w in p.weights]
        self.xs, self.ys = tg.constant(p.x), tg.constant(p.onehot)
        # the loop's examples, split once, outside the timed calls
        self.examples = [(tg.constant(x), tg.constant(y)) for x, y in zip(p.x, p.onehot)]
        k = len(self.params)
        self.grad = tg.grad(self.loss, argnums=tuple(range(k)))
        self.vmapped = tg.vmap(self.grad, in_axes=(None,) * k + (0, 0))
        self.traced = tg.function(self.vmapped)   # traced on the first call

    @staticmethod
    def loss(W1, b1, W2, b2, W3, b3, x, y):
        """One example's loss: x (784,), y its one-hot label (10,)."""
        h = tg.tanh(x @ W1 + b1)
        h = tg.tanh(h @ W2 + b2)
        return -tg.sum(y * tg.log_softmax(h @ W3 + b3, axis=-1))

    def per_example(self):
        return self.vmapped(*self.params, self.xs, self.ys)

    def function_per_example(self):
        """``tg.function(tg.vmap(tg.grad(loss)))``, as a JAX user jits ``vmap(grad)``."""
        return self.traced(*self.params, self.xs, self.ys)

    def loop(self):
        grads = [self.grad(*self.params, x, y) for x, y in self.examples]
        return [tg.stack(gs) for gs in zip(*grads)]

    def batch_gradient(self):
        """mlp_medium's gradient: the mean loss of the batch on a tape."""
        return mlp.teachgrad_gradient(self.p)

    @staticmethod
    def host(result):
        return [g.numpy() for g in result]


class Jax:
    """``jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))``, jitted or not."""

    def __init__(self, p, jit):
        jax = common.load("jax")
        if jax is None:
            raise mlp_peers.Unavailable("jax")
        import jax.numpy as jnp
        self.name, self.jax = ("jax jit" if jit else "jax"), jax
        self.params = [jnp.asarray(w) for w in p.weights]
        self.xs, self.ys = jnp.asarray(p.x), jnp.asarray(p.onehot)

        def loss(params, x, y):
            h = x
            for W, b in zip(params[0:-2:2], params[1:-2:2]):
                h = jnp.tanh(h @ W + b)
            return -jnp.sum(y * jax.nn.log_softmax(h @ params[-2] + params[-1]))

        fn = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))
        self._per_example = jax.jit(fn) if jit else fn

    def per_example(self):   # JAX dispatches asynchronously: wait for the result
        return self.jax.block_until_ready(self._per_example(self.params, self.xs, self.ys))

    @staticmethod
    def host(result):
        return [np.asarray(g) for g in result]


class Torch:
    """``torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))``."""
    name = "torch"

    def __init__(self, p, device="cpu"):
        torch = common.load("torch")
        if torch is None:
            raise mlp_peers.Unavailable("torch")
        import torch.func
        self.params = tuple(torch.tensor(w, device=device) for w in p.weights)
        self.xs = torch.tensor(p.x, device=device)
        self.ys = torch.tensor(p.onehot, device=device)

        def loss(params, x, y):
            h = x
            for W, b in zip(params[0:-2:2], params[1:-2:2]):
                h = torch.tanh(h @ W + b)
            return -(y * torch.log_softmax(h @ params[-2] + params[-1], dim=-1)).sum()

        self._per_example = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))

    def per_example(self):
        return self._per_example(self.params, self.xs, self.ys)

    @staticmethod
    def host(result):
        return [g.cpu().numpy() for g in result]


def peers(p):
    """Every peer that is installed: {name: object}. Missing ones print a note."""
    return mlp_peers.installed(lambda: Torch(p), lambda: Jax(p, jit=True),
                               lambda: Jax(p, jit=False))
