"""Checking a rule a student wrote: ``check_vjp`` and ``check_jvp``.

The student writes a rule in the same form as ``tg.ops.defvjp`` / ``defjvp``
take it, and the checker compares it with central finite differences of the
function itself, entry by entry, on float64 inputs:

    def sin_vjp(g, ans, x):
        return g * tg.cos(x)

    tg.exercises.check_vjp(tg.sin, sin_vjp, [0.3, 1.2, -2.0])   # Right! ...

The verdicts, checked in this order (see ``Feedback``): the rule raised; it
returned the wrong number of results, or None where there is a gradient; the
wrong shape (with the broadcasting explained); a wrong value, at which entry;
and finally, for a rule with the right values, whether it can be
differentiated again: a rule written with numpy (``np.cos(x)``) instead of
teachgrad ops (``tg.cos(x)``) computes the right numbers, but autodiff cannot
see through it, so second derivatives, and forward mode by transposition,
would silently be wrong. Differentiating the rule again may also need the
gradient of an op that has none yet (often the very op whose rule is being
written, reached through ``ans``): the checker says which.
"""
import inspect

import numpy as np

from .. import backend, nest
from ..autodiff.tape import GradientTape
from ..debug import rulecheck
from ..ops import IndexedSlices
from ..ops import sum as tg_sum
from ..tensor import Tensor, constant
from .explain_shapes import jvp_shape_story, reduction_story, vjp_shape_story
from .feedback import Feedback, NotYet

ATOL, RTOL = 1e-6, 1e-5          # for first derivatives
ATOL2, RTOL2 = 1e-5, 1e-4        # for differentiating the rule again (differences of differences)


def check_vjp(f, rules, inputs, seed=0):
    """Check VJP rules ``rule(g, ans, *inputs)`` for the function ``f``.

    Args:
      f: a function of tensors returning one tensor (``tg.sin``, ``lambda x, y: x * y``).
      rules: one rule per input of ``f`` (a single callable when ``f`` takes one
        input); None for an input with no gradient.
      inputs: the point to check at: one array-like per input (a single one for
        one input). They are converted to float64.
      seed: for the random cotangent ``g``.

    Returns:
      A ``Feedback``: truthy when the rule is right; shows itself in a notebook.
    """
    with np.errstate(all="ignore"):
        return _Check(f, rules, inputs, seed, "vjp").run()


def check_jvp(f, rules, inputs, seed=0):
    """Check JVP rules ``rule(x_dot, ans, *inputs)`` for ``f``: each returns its input's
    contribution to the output tangent (the output's shape). Arguments as ``check_vjp``."""
    with np.errstate(all="ignore"):
        return _Check(f, rules, inputs, seed, "jvp").run()


def _as_inputs(inputs, count):
    """One float64 array per input. With one rule, ``inputs`` is that input (or a
    one-element list holding it); with several, a list of them."""
    def is_array_like(x):
        return isinstance(x, (list, tuple, np.ndarray, Tensor))
    if count == 1:
        items = [inputs[0]] if isinstance(inputs, (list, tuple)) and len(inputs) == 1 \
            and is_array_like(inputs[0]) else [inputs]
    elif isinstance(inputs, (list, tuple)) and len(inputs) == count:
        items = list(inputs)
    else:
        raise ValueError(f"Give one input per rule: {count} rules, so a list of {count} "
                         f"inputs.")
    return [backend.xp.asarray(np.asarray(x.numpy() if isinstance(x, Tensor) else x,
                                          dtype=np.float64)) for x in items]


def _arity(f, default):
    """How many tensors ``f`` takes: its required positional parameters, when it says."""
    try:
        params = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):
        return default
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return default
    required = [p for p in params if p.default is p.empty
                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(required) or default


def _dense(value):
    if isinstance(value, IndexedSlices):
        value = value.to_dense()
    return value


class _Check:
    def __init__(self, f, rules, inputs, seed, mode):
        self.f, self.mode = f, mode
        self.rules = list(rules) if isinstance(rules, (list, tuple)) else [rules]
        self.arrays = _as_inputs(inputs, _arity(f, len(self.rules)))
        self.rng = np.random.default_rng(seed)
        self.h = rulecheck.step_size([np.float64])[0]

    def evaluate(self, arrays):
        out = self.f(*[constant(a) for a in arrays])
        leaves = nest.flatten(out)
        if len(leaves) != 1 or not isinstance(leaves[0], Tensor):
            raise TypeError("the exercise checker needs a function returning one tensor, got "
                            f"{type(out).__name__}.")
        return [backend.xp.asarray(leaves[0]._value, dtype=np.float64)]

    def run(self):
        n = len(self.arrays)
        if len(self.rules) != n:
            return Feedback("wrong_count", f"f takes {n} input{'s' if n != 1 else ''}, so give "
                            f"{n} rule{'s' if n != 1 else ''} (one per input, None for an input "
                            f"without a gradient), not {len(self.rules)}.")
        self.ans = self.evaluate(self.arrays)[0]
        self.out_shape = tuple(self.ans.shape)
        self.g = self.rng.standard_normal(self.out_shape)   # the cotangent a VJP rule gets
        check = self._check_vjp if self.mode == "vjp" else self._check_jvp
        for i, rule in enumerate(self.rules):
            if rule is not None:
                found = check(i, rule)
                if found is not None:
                    return found
        for i, rule in enumerate(self.rules):
            if rule is not None:
                found = self._check_differentiable(i, rule)
                if found is not None:
                    return found
        what = "VJP" if self.mode == "vjp" else "JVP"
        rules = f"your {what} rules match" if n > 1 else f"your {what} rule matches"
        return Feedback("right", f"{rules} finite differences at every entry, and can be "
                                 f"differentiated again.")

    def _call(self, rule, first, i):
        """Call the rule on Tensors; returns (result, None) or (None, Feedback)."""
        xs = [constant(a) for a in self.arrays]
        try:
            return rule(first, Tensor(self.ans), *xs), None
        except NotImplementedError as error:
            said = str(error)       # a stub fetched by tg.exercises.answer says what it is
            if said.startswith("Not yet: "):
                return None, Feedback("raised", f"the rule for input {i}: "
                                      f"{said[len('Not yet: '):]}", i)
            return None, Feedback("raised", f"the rule for input {i} is not written yet: it "
                                  f"still raises NotImplementedError. Replace that line with "
                                  f"your rule.", i)
        except Exception as raised:
            # a rule fetched by tg.exercises.answer: say what the rule itself raised
            error = raised.__cause__ if isinstance(raised, NotYet) and raised.__cause__ \
                else raised
            text = str(error).rstrip()
            text += "" if text.endswith((".", "!", "?")) else "."
            return None, Feedback("raised", f"the rule for input {i} raised "
                                  f"{type(error).__name__}: {text}"
                                  f"{self._raised_hint(rule, i, error)}", i)

    def _raised_hint(self, rule, i, error):
        """What a rule that raised most likely got wrong."""
        first = "g" if self.mode == "vjp" else "x_dot"
        if isinstance(error, TypeError) and "positional argument" in str(error) and \
                _arity(rule, None) == len(self.arrays) + 1:
            return (f" A rule is called as rule({first}, ans, *inputs): ans, the output of f, "
                    f"comes second even where the rule does not use it. Did you leave it out?")
        if not isinstance(error, ValueError) or "shape" not in str(error):
            return ""
        shapes = ", ".join(f"input {k} {tuple(a.shape)}" for k, a in enumerate(self.arrays))
        hint = (f" Line the shapes up: {first} has the output's shape {self.out_shape}; "
                f"{shapes}; the rule's result must have the shape of "
                f"{'input ' + str(i) if self.mode == 'vjp' else 'the output'}.")
        story = reduction_story(tuple(self.arrays[i].shape), self.out_shape)
        if self.mode == "vjp" and story:
            return hint + " " + story
        return hint + " In a product, one factor may need tg.transpose."

    # -- VJP ----------------------------------------------------------------------------
    def _check_vjp(self, i, rule):
        got, problem = self._call(rule, constant(self.g), i)
        if problem is not None:
            return problem
        scale = rulecheck.scale_of(self.arrays[i])
        expected = np.array(rulecheck.numeric_vjp_entries(
            self.evaluate, self.arrays, i, [backend.xp.asarray(self.g)], scale, self.h,
            self.arrays[i].size)).reshape(self.arrays[i].shape)
        if got is None:
            if np.allclose(expected, 0, atol=ATOL):
                return None
            return Feedback("returned_none", f"the rule for input {i} returned None, but the "
                            f"output does depend on input {i}: return its cotangent.", i)
        got_array = np.asarray(backend.to_numpy(getattr(_dense(got), "_value", got)),
                               dtype=np.float64)
        if got_array.shape != tuple(self.arrays[i].shape):
            return Feedback("wrong_shape", vjp_shape_story(i, got_array.shape,
                                                           tuple(self.arrays[i].shape),
                                                           self.out_shape), i)
        without_g = lambda: np.array(rulecheck.numeric_vjp_entries(   # noqa: E731
            self.evaluate, self.arrays, i, [backend.xp.ones(self.out_shape)], scale, self.h,
            self.arrays[i].size)).reshape(self.arrays[i].shape)
        return _compare(got_array, expected, i, "input", "J^T g", without_g,
                        "the derivative without the cotangent: multiply by g (the chain rule)",
                        kink=lambda entry: self._kink(i, entry),
                        itself=np.asarray(backend.to_numpy(self.g)) * np.asarray(
                            backend.to_numpy(self.ans)) if self.out_shape == tuple(
                            self.arrays[i].shape) else None)

    def _kink(self, i, entry):
        """``(low, high)``, the one-sided slopes of <g, f> along entry ``entry`` of input
        ``i`` where f has a kink there (abs or relu at 0), else None. A kink's gap between
        the slopes stays as the step shrinks; a smooth function's shrinks with it."""
        cache = self.__dict__.setdefault("_kinks", {})
        if (i, entry) not in cache:
            scale = float(np.ravel(backend.to_numpy(rulecheck.scale_of(self.arrays[i])))[
                int(np.ravel_multi_index(entry, self.arrays[i].shape)) if entry else 0])
            t = np.zeros(self.arrays[i].shape)
            t[entry] = scale
            eps = float(np.finfo(np.float64).eps)
            u = [backend.xp.asarray(self.g)]
            small, smaller = (rulecheck.difference(self.evaluate, self.arrays, i,
                                                   backend.xp.asarray(t), u, self.h / k,
                                                   [self.ans], eps) for k in (100, 400))
            gap, gap_smaller = small.forward - small.backward, smaller.forward - smaller.backward
            kink = abs(gap) > 1e-6 * (1 + abs(small.central)) + small.noise and \
                abs(gap_smaller) >= 0.5 * abs(gap)
            cache[(i, entry)] = tuple(sorted((smaller.forward / scale,
                                              smaller.backward / scale))) if kink else None
        return cache[(i, entry)]

    # -- JVP ----------------------------------------------------------------------------
    def _check_jvp(self, i, rule):
        x_shape = tuple(self.arrays[i].shape)
        scale = rulecheck.scale_of(self.arrays[i])
        t = self.rng.standard_normal(x_shape) * backend.to_numpy(scale)
        got, problem = self._call(rule, constant(t), i)
        if problem is not None:
            return problem
        ones = [backend.xp.ones(self.out_shape)]

        def jt(direction):
            d = rulecheck.difference(self.evaluate, self.arrays, i,
                                     backend.xp.asarray(direction), ones, self.h,
                                     [self.ans], float(np.finfo(np.float64).eps))
            return np.asarray(backend.to_numpy(d.jt[0]))
        expected = jt(t)
        if got is None:
            if np.allclose(expected, 0, atol=ATOL):
                return None
            return Feedback("returned_none", f"the rule for input {i} returned None, but the "
                            f"output does depend on input {i}: return its tangent "
                            f"contribution.", i)
        got_array = np.asarray(backend.to_numpy(getattr(_dense(got), "_value", got)),
                               dtype=np.float64)
        if got_array.shape != self.out_shape:
            return Feedback("wrong_shape", jvp_shape_story(i, got_array.shape, x_shape,
                                                           self.out_shape), i)
        return _compare(got_array, expected, i, "output", "J x_dot",
                        lambda: jt(np.ones(x_shape)),
                        "the derivative without the tangent: multiply by x_dot")

    # -- differentiable again ----------------------------------------------------------
    def _check_differentiable(self, i, rule):
        """Differentiate phi = <rule(first, f(x), x), v> with the tape and by differences,
        with respect to each input and to the rule's first argument (g or x_dot)."""
        first = self.g if self.mode == "vjp" else self._tangent_for(i)
        arrays = self.arrays + [backend.xp.asarray(first)]
        result_shape = self.arrays[i].shape if self.mode == "vjp" else self.out_shape
        v = self.rng.standard_normal(result_shape)

        def phi(args):
            xs = [constant(a) for a in args[:-1]]
            r = _dense(rule(constant(args[-1]), self.f(*xs), *xs))
            return [backend.xp.asarray(np.sum(np.asarray(r, dtype=np.float64) * v))]
        xs = [constant(a) for a in self.arrays]
        g_tensor = constant(arrays[-1])
        with GradientTape() as tape:
            tape.watch(xs + [g_tensor])
            ans = self.f(*xs)
            f_ops = {node.op for node in tape._producers.values()}
            r = _dense(rule(g_tensor, ans, *xs))
            phi_by_tape = tg_sum(r * constant(v)) if isinstance(r, Tensor) else None
        if phi_by_tape is None:
            return self._not_again(i, "it returned a numpy array, not a teachgrad tensor")
        without_rule = list(dict.fromkeys(
            node.op for node in tape._producers.values()
            if node.op.differentiable and node.op.vjp_rules is None and node.op.vjp_all is None))
        try:
            tape_grads = tape.gradient(phi_by_tape, xs + [g_tensor],
                                       unconnected_gradients="zero")
        except LookupError:
            if not without_rule:
                raise
            return self._no_rule(i, without_rule, f_ops)
        for k, a in enumerate(arrays):
            numeric = np.array(rulecheck.numeric_vjp_entries(
                phi, arrays, k, [backend.xp.ones(())], rulecheck.scale_of(a), self.h,
                a.size)).reshape(a.shape)
            by_tape = np.asarray(backend.to_numpy(_dense(tape_grads[k])._value),
                                 dtype=np.float64)
            off = ~np.isclose(by_tape, numeric, atol=ATOL2 * (1 + np.abs(numeric).max(
                initial=0)), rtol=RTOL2)
            if k < len(self.arrays) and self.mode == "vjp":
                for flat in np.flatnonzero(off):   # a kink of f: its rule jumps there
                    at = tuple(int(j) for j in np.unravel_index(int(flat), off.shape))
                    if self._kink(k, at) is not None:
                        off[at] = False
            if off.any():
                what = f"input {k}" if k < len(self.arrays) else \
                    ("g" if self.mode == "vjp" else "x_dot")
                return self._not_again(i, f"its result changes with {what} in a way the "
                                          f"tape does not see (by the tape "
                                          f"{_first(by_tape)}, by differences "
                                          f"{_first(numeric)})")
        return None

    def _no_rule(self, i, ops, f_ops):
        """The tape met ``ops``, which have no VJP rule, while differentiating the rule."""
        names = " and ".join(op.name for op in ops)
        kind = "an op" if len(ops) == 1 else "ops"
        if all(op in f_ops for op in ops):
            # Usually the op the student is writing this rule for: it has none yet.
            fix = ("Register your rule with tg.ops.defvjp and check again" if self.mode == "vjp"
                   else f"Give {names} a VJP rule (tg.ops.defvjp) and check again")
            why = (f"it uses ans, which f computes with {names}, {kind} with no gradient rule "
                   f"yet, so the tape cannot differentiate through ans. {fix}, or write the "
                   f"rule in terms of the inputs instead of ans")
        else:
            why = (f"it uses {names}, {kind} with no gradient rule, so the tape cannot "
                   f"differentiate through it. Give {names} a rule (tg.ops.defvjp), or write "
                   f"the rule with teachgrad ops that have one")
        return Feedback("no_gradient_rule", f"the rule for input {i} gives the right values, "
                        f"but cannot be differentiated again: {why}.", i)

    def _tangent_for(self, i):
        return self.rng.standard_normal(tuple(self.arrays[i].shape))

    def _not_again(self, i, why):
        return Feedback("not_differentiable_again", f"the rule for input {i} gives the right "
                        f"values, but cannot be differentiated again: {why}. Part of it was "
                        f"computed outside teachgrad (with numpy, or via .numpy()), so autodiff "
                        f"cannot differentiate it again. "
                        f"Second derivatives, and forward mode by transposing the rule, would "
                        f"be wrong. Write it with teachgrad ops (tg.cos, not np.cos).", i)


def _first(array):
    flat = np.ravel(array)
    return f"{flat[0]:.6g}" if flat.size == 1 else np.array2string(flat[:4], precision=4)


def _compare(got, expected, i, where, what, alternative, alternative_hint, kink=None,
             itself=None):
    """A wrong_value Feedback at the first entry that differs (None when all agree).

    ``kink(entry)`` gives the one-sided slopes where f has no derivative (abs at 0):
    there any value between them is right (a subgradient), and a value outside them
    gets a message about the kink. ``itself`` is g times f's own value (a hint).
    """
    tol = ATOL * (1 + float(np.abs(expected).max(initial=0))) + RTOL * np.abs(expected)
    bad = np.abs(got - expected) > tol
    kinks = {}
    if kink is not None:
        for flat in np.flatnonzero(bad):
            entry = tuple(int(k) for k in np.unravel_index(int(flat), got.shape))
            sides = kink(entry)
            if sides is not None:
                kinks[entry] = sides
                low, high = sides
                slack = ATOL * (1 + abs(low) + abs(high))
                if low - slack <= got[entry] <= high + slack:
                    bad[entry] = False
    if not bad.any():
        return None
    entry = tuple(int(k) for k in np.unravel_index(int(np.argmax(bad)), got.shape)) \
        if got.ndim else ()
    if entry in kinks:
        low, high = kinks[entry]
        return Feedback("wrong_value", f"the rule for input {i} is wrong at {where} entry "
                        f"{entry}, where f has a kink (no derivative): the slopes on its two "
                        f"sides are {low:.6g} and {high:.6g}, so any value between them (a "
                        f"subgradient) is right there, but yours is {float(got[entry]):.6g}.",
                        i, entry, float(got[entry]), float(expected[entry]))
    hint = _hint(got, expected, alternative, alternative_hint)
    if not hint and itself is not None and np.allclose(got, itself, rtol=1e-4, atol=1e-8):
        hint = (" It looks like g times the function's own value (ans): the function where "
                "its derivative belongs (sin where cos belongs, say).")
    return Feedback("wrong_value", f"the rule for input {i} is wrong at {where} entry {entry}: "
                    f"it gives {float(got[entry]):.6g}, the right value ({what}, by "
                    f"finite differences) is {float(expected[entry]):.6g}; {int(bad.sum())} of "
                    f"{bad.size} entries differ.{hint}", i, entry, float(got[entry]),
                    float(expected[entry]))


def _hint(got, expected, alternative, alternative_hint):
    big = np.abs(expected) > 1e-8
    if big.any():
        ratio = got[big] / expected[big]
        if np.allclose(ratio, -1, rtol=1e-4):
            return " The sign is flipped."
        if np.isfinite(ratio).all() and abs(ratio.flat[0]) > 1e-8 and \
                np.allclose(ratio, ratio.flat[0], rtol=1e-4):
            return f" It is off by a factor of {ratio.flat[0]:.4g} everywhere."
    other = alternative()
    if np.allclose(got, other, rtol=1e-4, atol=1e-6):
        return f" It looks like {alternative_hint}."
    return ""
