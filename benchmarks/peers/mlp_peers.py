"""One MLP loss, written once per library, the way each library's users write it.

The loss is ``benchmarks/mlp_gradient.py``'s: tanh hidden layers, softmax
cross-entropy as ``-mean(log_softmax(logits)[rows, labels])``, with respect to
every weight and bias (never the input data, unless a JVP asks for the input
direction). Each class offers the same five computations:

* ``forward()``  the loss (no recording);
* ``gradient()`` the loss and its gradient with respect to the parameters;
* ``jvp()``      the loss's JVP along ``v`` (one direction over every parameter);
* ``jvp_x()``    its JVP along ``vx`` (a direction in the input batch);
* ``hvp()``      the Hessian-vector product ``H v`` (parameters).

teachgrad also offers ``function_gradient()`` and ``function_hvp()``: the gradient and
the HVP as ``tg.function``s of the batch (traced on the first call), beside JAX's jit.

teachgrad and PyTorch also offer ``fused_gradient()``: the same loss written with the
library's fused cross-entropy op (``tg.sparse_softmax_cross_entropy_with_logits``,
``torch.nn.functional.cross_entropy``), as the hand-written numpy pass is fused.

and ``host(result)``, which turns a result into numpy arrays for the checks.
Each class raises ``Unavailable`` when its library is not installed.
"""
import dataclasses

import numpy as np

import common
import mlp_gradient as mlp
import teachgrad as tg


class Unavailable(Exception):
    """The library is not installed (``common.load`` printed a note)."""


def directions(p, seed=1):
    """A fixed direction over every parameter, and one in the input batch."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(p.config.dtype)
    v = [rng.standard_normal(w.shape).astype(dtype) for w in p.weights]
    vx = rng.standard_normal(p.x.shape).astype(dtype)
    return v, vx


# -- numpy by hand: the floor and the reference ------------------------------------------
def activations(p):
    """``(hs, d)`` by hand: each layer's input ``[x, h1, h2, ...]``, and the gradient of
    each example's loss (not the mean's) with respect to its logits,
    ``softmax(logits) - onehot``."""
    Ws, bs = p.weights[0::2], p.weights[1::2]
    hs = [p.x]
    for W, b in zip(Ws[:-1], bs[:-1]):
        hs.append(np.tanh(hs[-1] @ W + b))
    logits = hs[-1] @ Ws[-1] + bs[-1]
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return hs, e / e.sum(axis=1, keepdims=True) - p.onehot


class Numpy:
    name = "numpy"

    def __init__(self, p, v, vx):
        self.p, self.v, self.vx = p, v, vx

    def forward(self, p=None):
        p = p or self.p
        Ws, bs = p.weights[0::2], p.weights[1::2]
        h = p.x
        for W, b in zip(Ws[:-1], bs[:-1]):
            h = np.tanh(h @ W + b)
        logits = h @ Ws[-1] + bs[-1]
        shifted = logits - logits.max(axis=1, keepdims=True)
        return -(shifted[p.rows, p.labels] - np.log(np.exp(shifted).sum(axis=1))).mean()

    def gradient(self):
        return mlp.numpy_gradient(self.p)

    def input_gradient(self):
        """dloss/dx, by hand (the gradient above never forms it)."""
        p = self.p
        Ws = p.weights[0::2]
        hs, d = activations(p)
        d = d / p.config.batch
        for i in reversed(range(len(Ws))):
            d = d @ Ws[i].T
            if i:
                d = d * (1 - hs[i] * hs[i])
        return d

    # references for the checks
    def jvp_reference(self):
        _, grads = self.gradient()
        return float(sum(np.vdot(g, d) for g, d in zip(grads, self.v)))

    def jvp_x_reference(self):
        return float(np.vdot(self.input_gradient(), self.vx))

    def hvp_reference(self, eps=1e-5):
        """Central differences of the exact gradient along ``v``."""
        def grads_at(sign):
            moved = [w + sign * eps * d for w, d in zip(self.p.weights, self.v)]
            return mlp.numpy_gradient(dataclasses.replace(self.p, weights=moved))[1]
        return [(a - b) / (2 * eps) for a, b in zip(grads_at(+1), grads_at(-1))]


# -- teachgrad --------------------------------------------------------------------------
class Teachgrad:
    name = "teachgrad"

    def __init__(self, p, v, vx):
        self.p = p
        self.v = [tg.constant(d) for d in v]
        self.vx = tg.constant(vx)
        self._fused_step = self._hvp_step = None

    def logits(self, x=None, params=None):
        params = self.p.tg_params if params is None else params
        h = self.p.tg_x if x is None else x
        for W, b in zip(params[0:-2:2], params[1:-2:2]):
            h = tg.tanh(h @ W + b)
        return h @ params[-2] + params[-1]

    def loss(self, x=None, params=None):
        p = self.p
        return -tg.mean(tg.log_softmax(self.logits(x, params), axis=-1)[p.rows, p.labels])

    def fused_loss(self, x=None):
        """The same loss with the fused op (what a TensorFlow user writes)."""
        labels = self.p.labels
        return tg.mean(tg.sparse_softmax_cross_entropy_with_logits(labels, self.logits(x)))

    def fused_gradient(self):
        params = self.p.tg_params
        with tg.GradientTape() as tape:
            loss = self.fused_loss()
        return loss, tape.gradient(loss, params)

    def fused_function_gradient(self):
        if self._fused_step is None:   # traced on the first call
            params = self.p.tg_params

            @tg.function
            def step(x):
                loss = self.fused_loss(x)
                return loss, tg.gradients(loss, params)
            self._fused_step = step
        return self._fused_step(self.p.tg_x)

    def forward(self):
        return self.loss()

    def gradient(self):
        return mlp.teachgrad_gradient(self.p)

    def function_gradient(self):
        return mlp.graph_gradient(self.p)     # the tg.function, traced on first call

    def jvp(self):
        with tg.ForwardAccumulator(self.p.tg_params, self.v) as acc:
            loss = self.loss()
        return loss, acc.jvp(loss)

    def jvp_x(self):
        with tg.ForwardAccumulator(self.p.tg_x, self.vx) as acc:
            loss = self.loss()
        return loss, acc.jvp(loss)

    def hvp(self):
        params = self.p.tg_params
        with tg.ForwardAccumulator(params, self.v) as acc:
            with tg.GradientTape() as tape:
                loss = self.loss()
            grads = tape.gradient(loss, params)
        return [acc.jvp(g) for g in grads]

    def function_hvp(self):
        """``tg.hvp`` in a ``tg.function`` of the batch, as a JAX user jits ``jvp(grad)``:
        one graph, forward over reverse, that the optimiser sees whole."""
        if self._hvp_step is None:   # traced on the first call
            params, v = tuple(self.p.tg_params), tuple(self.v)

            @tg.function
            def step(x):
                return tg.hvp(lambda *ws: self.loss(x, ws), params, v)
            self._hvp_step = step
        return self._hvp_step(self.p.tg_x)

    @staticmethod
    def host(result):
        return _host(result, lambda t: t.numpy())


# -- PyTorch (CPU) ------------------------------------------------------------------------
class Torch:
    name = "torch"

    def __init__(self, p, v, vx, device="cpu"):
        torch = common.load("torch")
        if torch is None:
            raise Unavailable("torch")
        import torch.func  # noqa: F401
        self.torch = torch

        def on_device(a, **kw):
            return torch.tensor(a, device=device, **kw)
        self.x = on_device(p.x)
        self.rows, self.labels = on_device(p.rows), on_device(p.labels)
        self.params = [on_device(w, requires_grad=True) for w in p.weights]
        self.plain = tuple(on_device(w) for w in p.weights)    # for no-grad and torch.func
        self.v = tuple(on_device(d) for d in v)
        self.vx = on_device(vx)

    def loss(self, params, x=None):
        torch = self.torch
        h = self.x if x is None else x
        for W, b in zip(params[0:-2:2], params[1:-2:2]):
            h = torch.tanh(h @ W + b)
        logits = h @ params[-2] + params[-1]
        return -torch.log_softmax(logits, dim=-1)[self.rows, self.labels].mean()

    def forward(self):
        with self.torch.no_grad():
            return self.loss(self.plain)

    def gradient(self):
        loss = self.loss(self.params)
        return loss, self.torch.autograd.grad(loss, self.params)

    def fused_gradient(self):
        """The same loss with PyTorch's fused ``cross_entropy``."""
        torch, params = self.torch, self.params
        h = self.x
        for W, b in zip(params[0:-2:2], params[1:-2:2]):
            h = torch.tanh(h @ W + b)
        loss = torch.nn.functional.cross_entropy(h @ params[-2] + params[-1], self.labels)
        return loss, torch.autograd.grad(loss, params)

    def jvp(self):
        return self.torch.func.jvp(lambda *ps: self.loss(ps), self.plain, self.v)

    def jvp_x(self):
        return self.torch.func.jvp(lambda x: self.loss(self.plain, x), (self.x,), (self.vx,))

    def hvp(self):
        """Double backward: the gradient of <gradient, v>."""
        loss = self.loss(self.params)
        grads = self.torch.autograd.grad(loss, self.params, create_graph=True)
        return self.torch.autograd.grad(grads, self.params, grad_outputs=self.v)

    @staticmethod
    def host(result):
        return _host(result, lambda t: t.detach().numpy())


# -- JAX (CPU), with and without jit --------------------------------------------------------
class Jax:
    def __init__(self, p, v, vx, jit=True):
        jax = common.load("jax")
        if jax is None:
            raise Unavailable("jax")
        import jax.numpy as jnp
        self.name = "jax jit" if jit else "jax"
        self.jax = jax
        x, rows, labels = jnp.asarray(p.x), jnp.asarray(p.rows), jnp.asarray(p.labels)
        self.params = [jnp.asarray(w) for w in p.weights]
        self.v = [jnp.asarray(d) for d in v]
        self.x, self.vx = x, jnp.asarray(vx)

        def loss(params, x):
            h = x
            for W, b in zip(params[0:-2:2], params[1:-2:2]):
                h = jnp.tanh(h @ W + b)
            logits = h @ params[-2] + params[-1]
            return -jnp.mean(jax.nn.log_softmax(logits, axis=-1)[rows, labels])

        def jvp(params, v, x):
            return jax.jvp(lambda ps: loss(ps, x), (params,), (v,))

        def jvp_x(params, x, vx):
            return jax.jvp(lambda x: loss(params, x), (x,), (vx,))

        def hvp(params, v, x):
            return jax.jvp(jax.grad(lambda ps: loss(ps, x)), (params,), (v,))[1]

        wrap = jax.jit if jit else (lambda f: f)
        self._forward = wrap(loss)
        self._gradient = wrap(jax.value_and_grad(loss))
        self._jvp, self._jvp_x, self._hvp = wrap(jvp), wrap(jvp_x), wrap(hvp)

    # JAX dispatches asynchronously: wait for the result, or the time means nothing.
    def forward(self):
        return self.jax.block_until_ready(self._forward(self.params, self.x))

    def gradient(self):
        return self.jax.block_until_ready(self._gradient(self.params, self.x))

    def jvp(self):
        return self.jax.block_until_ready(self._jvp(self.params, self.v, self.x))

    def jvp_x(self):
        return self.jax.block_until_ready(self._jvp_x(self.params, self.x, self.vx))

    def hvp(self):
        return self.jax.block_until_ready(self._hvp(self.params, self.v, self.x))

    @staticmethod
    def host(result):
        return _host(result, np.asarray)


# -- HIPS autograd ----------------------------------------------------------------------------
class Autograd:
    name = "autograd"

    def __init__(self, p, v, vx):
        autograd = common.load("autograd")
        if autograd is None:
            raise Unavailable("autograd")
        import autograd.numpy as anp
        from autograd.differential_operators import make_jvp
        from autograd.scipy.special import logsumexp
        rows, labels = p.rows, p.labels
        self.params, self.x, self.v, self.vx = list(p.weights), p.x, list(v), vx

        def loss(params, x):
            h = x
            for W, b in zip(params[0:-2:2], params[1:-2:2]):
                h = anp.tanh(h @ W + b)
            logits = h @ params[-2] + params[-1]
            logp = logits - logsumexp(logits, axis=1, keepdims=True)
            return -anp.mean(logp[rows, labels])

        grad_params = autograd.grad(loss)

        def grad_dot_v(params, v):
            return sum(anp.sum(g * d) for g, d in zip(grad_params(params, self.x), v))

        self._loss = loss
        self._value_and_grad = autograd.value_and_grad(loss)
        self._jvp = make_jvp(lambda ps: loss(ps, self.x))            # forward mode
        self._jvp_x = make_jvp(lambda x: loss(self.params, x))
        self._hvp = autograd.grad(grad_dot_v)                           # reverse over reverse

    def forward(self):
        return self._loss(self.params, self.x)

    def gradient(self):
        return self._value_and_grad(self.params, self.x)

    def jvp(self):
        return self._jvp(self.params)(self.v)

    def jvp_x(self):
        return self._jvp_x(self.x)(self.vx)

    def hvp(self):
        return self._hvp(self.params, self.v)

    @staticmethod
    def host(result):
        return _host(result, np.asarray)


def _host(result, convert):
    """Nested tuples/lists of arrays -> the same nesting of numpy arrays."""
    if isinstance(result, (list, tuple)):
        return [_host(r, convert) for r in result]
    return np.asarray(convert(result))


def installed(*makers):
    """``{name: peer}`` for each of ``makers`` (no-argument callables that build a peer
    object with a ``name``) whose library is installed; a missing one prints a note."""
    found = {}
    for make in makers:
        try:
            peer = make()
        except Unavailable:
            continue
        found[peer.name] = peer
    return found


def peers(p, v, vx):
    """Every peer that is installed: {name: object}. Missing ones print a note."""
    return installed(lambda: Torch(p, v, vx), lambda: Jax(p, v, vx, jit=True),
                     lambda: Jax(p, v, vx, jit=False), lambda: Autograd(p, v, vx))
