r"""``tg.optimizers``: gradient descent with TensorFlow's (Keras's) update rules::

    opt = tg.optimizers.Adam(learning_rate=1e-3)
    with tg.GradientTape() as tape:
        loss = model_loss(w, b)
    grads = tape.gradient(loss, [w, b])
    opt.apply_gradients(zip(grads, [w, b]))      # w, b are tg.Variables

An optimizer keeps, per Variable, the *slots* its rule needs (SGD's velocity,
Adam's two moments), made the first time it sees the Variable, and a step count
``iterations`` (a Variable too). The updates are written in teachgrad ops and
assigned with ``Variable.assign``, so the same code runs eagerly and inside
``tg.function``, where the assignments become part of the traced graph.

* **SGD**: $w \leftarrow w - \eta g$; with momentum $\mu$, a velocity
  $v \leftarrow \mu v - \eta g$, then $w \leftarrow w + v$ (Nesterov:
  $w \leftarrow w + \mu v - \eta g$, with the new $v$).
* **Adam** at step $t$ (from 1): $m \leftarrow m + (1 - \beta_1)(g - m)$,
  $v \leftarrow v + (1 - \beta_2)(g^2 - v)$, and with
  $\eta_t = \eta \sqrt{1 - \beta_2^t} / (1 - \beta_1^t)$ (the bias correction),
  $w \leftarrow w - \eta_t\, m / (\sqrt{v} + \epsilon)$; with ``amsgrad``, $\sqrt{v}$ is
  replaced by $\sqrt{\hat v}$, $\hat v \leftarrow \max(\hat v, v)$.

Every optimizer takes Keras 3's ``weight_decay``, ``clipnorm``, ``clipvalue`` and
``global_clipnorm`` (at most one of the three clippings), applied in Keras's order: the
gradients are clipped first, then each Variable decays, $w \leftarrow w - \eta\lambda w$
(decoupled weight decay: it is not added to the gradient), then the rule's step runs
with the clipped gradients.
"""
import contextlib

import numpy as np

from . import backend, validate
from .ops import IndexedSlices, add_n, cast, clip, maximum, power, sqrt, square, sum as reduce_sum
from .ops.core.apply import mode
from .optimizer_checks import hyperparameter, optional_hyperparameter
from .state import state
from .tensor import SymbolicTensor, Tensor, Variable

__all__ = ["Adam", "Optimizer", "SGD"]


class Optimizer:
    r"""What SGD and Adam share: the checks on ``apply_gradients``, gradient clipping and
    weight decay, the slots, the step count. A subclass gives ``_update(g, w, per_step)``,
    which assigns ``w`` its new value (``g`` a dense tensor of ``w``'s dtype), and may give
    ``_per_step(step)``: what its rule needs once per step, not once per Variable (Adam's
    bias-corrected learning rate), from ``step``, the step number from 1 as a tensor of
    the Variables' dtype. ``_update`` gets it as ``per_step``; like TensorFlow's
    optimizers, a step computes it once per dtype. Every optimizer takes the options
    below, as in Keras 3.

    Args:
      weight_decay: $\lambda \ge 0$: before each step, $w \leftarrow w - \eta\lambda w$.
      clipnorm: $c > 0$: each gradient is scaled to a norm of at most $c$,
        $g \leftarrow g\, c / \max(\lVert g \rVert, c)$.
      clipvalue: $c > 0$: each gradient entry is clipped to $[-c, c]$.
      global_clipnorm: $c > 0$: all gradients are scaled together, by
        $c / \max(\lVert (g_1, \dots, g_n) \rVert, c)$, so their joint norm is at most $c$.
    """

    def __init__(self, learning_rate, name, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None):
        if not isinstance(name, str) or not name:
            validate.fail(TypeError, "tg.optimizers.Optimizer", "name", "a non-empty string "
                          "(the prefix of its Variables' names)", name)
        self.name = name
        self.learning_rate = hyperparameter(learning_rate, "learning_rate", name)
        self.weight_decay = optional_hyperparameter(weight_decay, "weight_decay", name)
        clipping = {"clipnorm": clipnorm, "clipvalue": clipvalue,
                    "global_clipnorm": global_clipnorm}
        given = [key for key, value in clipping.items() if value is not None]
        if len(given) > 1:
            validate.fail(ValueError, f"tg.optimizers.{name}", given[1], "None when `"
                          f"{given[0]}` is set: only one of `clipnorm`, `clipvalue` and "
                          "`global_clipnorm` can be set (as in Keras)", clipping[given[1]])
        self.clipnorm = optional_hyperparameter(clipnorm, "clipnorm", name)
        self.clipvalue = optional_hyperparameter(clipvalue, "clipvalue", name)
        self.global_clipnorm = optional_hyperparameter(global_clipnorm, "global_clipnorm", name)
        self.iterations = Variable(backend.xp.asarray(0, dtype="int64"), trainable=False,
                                   name=f"{name}/iterations")
        self._slots = {}    # (Variable id, slot name) -> (Variable, its slot Variable)

    def get_slot(self, variable, slot_name):
        """The slot ``slot_name`` (``"momentum"``; ``"m"``, ``"v"``) kept for ``variable``."""
        key = (getattr(variable, "id", None), slot_name)
        if not isinstance(slot_name, str) or key not in self._slots:
            validate.fail(ValueError, f"{self.name}.get_slot", "slot_name", "the name of a "
                          "slot made for this variable by apply_gradients", slot_name)
        return self._slots[key][1]

    def _slot(self, variable, slot_name):
        """The slot, made (zeros of the Variable's shape and dtype) on first use."""
        key = (variable.id, slot_name)
        if key not in self._slots:
            zeros = backend.xp.zeros(variable.shape, variable.dtype)
            label = f"{variable.name or 'variable'}/{slot_name}"
            self._slots[key] = (variable, Variable(zeros, trainable=False, name=label))
        return self._slots[key][1]

    def apply_gradients(self, grads_and_vars):
        """Update each Variable by its gradient: ``opt.apply_gradients(zip(grads, vars))``.

        A None gradient (a Variable the loss does not depend on) is skipped; an
        ``IndexedSlices`` gradient (from ``tg.gather``) is made dense first. Returns
        ``iterations``, the number of steps taken so far (a Variable)."""
        pairs = self._checked_pairs(grads_and_vars)
        with _unrecorded_updates_on_arrays():
            grads = self._clipped([g for g, _ in pairs])
            variables = [w for _, w in pairs]
            if self.weight_decay is not None:
                for w in variables:
                    w.assign(w - w * self.weight_decay * self.learning_rate)
            per_step = {}   # dtype -> what _per_step computed for it
            for g, w in zip(grads, variables):
                if w.dtype not in per_step:
                    per_step[w.dtype] = self._per_step(cast(self.iterations + 1, w.dtype))
                self._update(g, w, per_step[w.dtype])
            self.iterations.assign_add(1)
        return self.iterations

    def _per_step(self, step):
        """What the rule needs at step ``step`` (a tensor) for every Variable alike: by
        default ``step`` itself."""
        return step

    def _clipped(self, grads):
        r"""The gradients clipped as Keras clips them (``_clip_gradients``). A norm of 0
        leaves a gradient as it is: $c / \max(0, c) = 1$."""
        if self.clipnorm:
            c = self.clipnorm
            return [g * c / maximum(sqrt(reduce_sum(square(g))), c) for g in grads]
        if self.global_clipnorm:
            c = self.global_clipnorm
            wide = np.result_type(*[g.dtype for g in grads])   # summed in the widest dtype
            norm = sqrt(add_n([reduce_sum(square(cast(g, wide))) for g in grads]))
            return [g * cast(c / maximum(norm, c), g.dtype) for g in grads]
        if self.clipvalue:
            return [clip(g, -self.clipvalue, self.clipvalue) for g in grads]
        return grads

    def _checked_pairs(self, grads_and_vars):
        where, name = f"{self.name}.apply_gradients", "grads_and_vars"
        accepted = "(gradient, Variable) pairs, e.g. zip(grads, variables)"
        if isinstance(grads_and_vars, (str, bytes, Tensor, dict)) or not hasattr(
                grads_and_vars, "__iter__"):
            validate.fail(TypeError, where, name, accepted, grads_and_vars)
        pairs, seen = [], set()
        for pair in list(grads_and_vars):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                validate.fail(TypeError, where, name, accepted + "; one item is not a pair",
                              pair)
            g, w = pair
            if not isinstance(w, Variable):
                validate.fail(TypeError, where, name, accepted + "; the second of a pair must "
                              "be a tg.Variable", w)
            if w.dtype.kind != "f":
                validate.fail(TypeError, where, name, "floating-point Variables (an integer "
                              "Variable has no gradient step)", w)
            if w.id in seen:
                validate.fail(ValueError, where, name, "each Variable once", w,
                              "Add up its gradients first.")
            seen.add(w.id)
            if g is not None:
                pairs.append((self._dense(g, w, where, name), w))
        if not pairs:
            validate.fail(ValueError, where, name, "at least one pair whose gradient is not "
                          "None (no gradients were provided for any variable)", grads_and_vars,
                          "Is the loss computed from these Variables inside the tape?")
        return pairs

    @staticmethod
    def _dense(g, w, where, name):
        """The gradient as a dense tensor of ``w``'s shape and dtype."""
        if isinstance(g, IndexedSlices):
            g = g.to_dense()
        if isinstance(g, SymbolicTensor) and g.graph is not state.graph:
            validate.fail(TypeError, where, name, "gradients with values here (eager tensors, "
                          "arrays or numbers)", g, f"The gradient {g.name} is a tensor of a "
                          f"graph: it has no value until the graph runs. Evaluate it first with "
                          f"tg.Session(graph).run(...), or compute and apply the gradients in "
                          f"one tg.function.")
        if not isinstance(g, Tensor):
            g = Tensor(validate.tensor_like(g, name, where, dtype=w.dtype))
        if g.dtype != w.dtype:
            validate.fail(TypeError, where, name, f"gradients of their Variable's dtype "
                          f"{w.dtype}", g)
        if g.shape is not None and tuple(g.shape) != tuple(w.shape) and not (
                isinstance(g, SymbolicTensor) and None in g.shape):
            validate.fail(ValueError, where, name, f"gradients of their Variable's shape "
                          f"{w.shape}", g)
        return g

    def __repr__(self):
        return f"tg.optimizers.{type(self).__name__}(learning_rate={self.learning_rate})"


class SGD(Optimizer):
    r"""Gradient descent, with momentum if ``momentum`` > 0 (``tf.keras.optimizers.SGD``).

    $v \leftarrow \mu v - \eta g$, then $w \leftarrow w + v$, or with ``nesterov``
    $w \leftarrow w + \mu v - \eta g$ (looking one velocity ahead). With $\mu = 0$ it is
    $w \leftarrow w - \eta g$.

    Args:
      learning_rate: $\eta \ge 0$.
      momentum: $\mu$ in $[0, 1]$.
      nesterov: use Nesterov momentum.
      weight_decay, clipnorm, clipvalue, global_clipnorm: as for every optimizer
        (``tg.optimizers.Optimizer``).
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None):
        super().__init__(learning_rate, "SGD", weight_decay, clipnorm, clipvalue,
                         global_clipnorm)
        self.momentum = hyperparameter(momentum, "momentum", "SGD", upper=1.0)
        self.nesterov = validate.boolean(nesterov, "nesterov", "SGD")

    def _update(self, g, w, step):   # SGD's rule does not depend on the step
        lr, mu = self.learning_rate, self.momentum
        if mu == 0:
            w.assign(w - lr * g)
            return
        velocity = self._slot(w, "momentum")
        velocity.assign(mu * velocity - lr * g)
        w.assign(w + (mu * velocity - lr * g if self.nesterov else velocity))


class Adam(Optimizer):
    r"""Adam (``tf.keras.optimizers.Adam``): steps scaled by running averages of the
    gradient ($m$) and of its square ($v$), with the bias of their zero start corrected.

    $m \leftarrow m + (1 - \beta_1)(g - m)$, $v \leftarrow v + (1 - \beta_2)(g^2 - v)$,
    $w \leftarrow w - \eta \frac{\sqrt{1 - \beta_2^t}}{1 - \beta_1^t}
    \frac{m}{\sqrt{v} + \epsilon}$ at step $t = 1, 2, \dots$

    Args:
      learning_rate: $\eta \ge 0$.
      beta_1, beta_2: the averages' decay rates, in $[0, 1)$.
      epsilon: $\epsilon \ge 0$, keeps the step finite where $v$ is 0. As in Keras it is
        added to $\sqrt{v}$, not to the bias-corrected $\sqrt{\hat v}$ of the paper (the
        paper's "epsilon hat").
      amsgrad: divide by the square root of the largest $v$ so far, $\hat v \leftarrow
        \max(\hat v, v)$ (AMSGrad, Reddi et al. 2018; its slot is ``"vhat"``).
      weight_decay, clipnorm, clipvalue, global_clipnorm: as for every optimizer
        (``tg.optimizers.Optimizer``).
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None):
        super().__init__(learning_rate, "Adam", weight_decay, clipnorm, clipvalue,
                         global_clipnorm)
        self.amsgrad = validate.boolean(amsgrad, "amsgrad", "Adam")
        self.beta_1 = hyperparameter(beta_1, "beta_1", "Adam", upper=1.0, open_upper=True)
        self.beta_2 = hyperparameter(beta_2, "beta_2", "Adam", upper=1.0, open_upper=True)
        self.epsilon = hyperparameter(epsilon, "epsilon", "Adam")

    def _per_step(self, step):
        r"""The learning rate with both bias corrections, the same for every Variable:
        $\eta_t = \eta \sqrt{1 - \beta_2^t} / (1 - \beta_1^t)$."""
        return self.learning_rate * sqrt(1 - power(self.beta_2, step)) / (
            1 - power(self.beta_1, step))

    def _update(self, g, w, lr_t):
        b1, b2 = self.beta_1, self.beta_2
        m, v = self._slot(w, "m"), self._slot(w, "v")
        # m_t and v_t, the moments after this step, are assigned to the slots and used
        # as they are for the step (not read back from the slots). Each difference has
        # its Variable on the left: unrecorded, square(g) and a clipped g are raw arrays,
        # and a CuPy array on the left of an operator does not hand it to a Variable on
        # its right as a numpy array does. (The same numbers: m - c (m - g) is
        # m + c (g - m), and v - c (v - g^2) is v + c (g^2 - v), to the bit.)
        m_t = m - (1 - b1) * (m - g)
        v_t = v - (1 - b2) * (v - square(g))
        m.assign(m_t)
        v.assign(v_t)
        if self.amsgrad:
            v_hat = self._slot(w, "vhat")
            v_t = maximum(v_hat, v_t)
            v_hat.assign(v_t)
        w.assign(w - m_t * lr_t / (sqrt(v_t) + self.epsilon))


def _unrecorded_updates_on_arrays():
    """Run an eager update that nothing records on raw arrays.

    When no graph is being built and no tape, accumulator, debug check or observer is
    on, no one sees the update's ops: they then compute on arrays and make no Tensor
    or Node (``state.arrays``, as the backward pass's rules do when nothing records
    them), and ``assign`` takes the arrays. The same ``_update`` code runs on Tensors
    inside ``tg.function`` or under a tape, where the ops are seen.
    """
    if state.unseen():
        return mode(arrays=True)
    return contextlib.nullcontext()

