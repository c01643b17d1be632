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

Student code cannot fool or hang the check: the rules get read-only copies of
the point (a rule that writes into ``x`` is told so, and the checker's point
stays as it was), each call runs under a time limit with its printing capped
(``guard``), whatever a rule returns that is not a tensor of numbers is named
(``student``), and a NaN in a result is never close to the right value.
"""

from dataclasses import replace

import numpy as np

from .. import backend, nest, validate
from ..debug import rulecheck
from ..tensor import Tensor, constant
from .again import differentiable_again
from .compare import ATOL, compare
from .elsewhere import at_another_point
from .explain_shapes import jvp_shape_story, reduction_story, vjp_shape_story
from .feedback import Feedback, NotYet
from .guard import Stopped, read_only, student_code
from .student import arity, as_inputs, described as _a, result_array


def check_vjp(f, rules, inputs, seed=0, slips=()):
    """Check VJP rules ``rule(g, ans, *inputs)`` for the function ``f``.

    Args:
      f: a function of tensors returning one tensor (``tg.sin``, ``lambda x, y: x * y``).
      rules: one rule per input of ``f`` (a single callable when ``f`` takes one
        input); None for an input with no gradient.
      inputs: the point to check at: one array-like per input (a single one for
        one input), finite and not empty. They are converted to float64.
      seed: for the random cotangent ``g``.
      slips: known wrong rules and what to say of them: ``(i, wrong_rule, hint)``;
        when the rule for input ``i`` gives what ``wrong_rule`` gives (it takes the
        same arguments), ``hint`` is added to the message (an exercise's own
        ``slips``: the conv2d rule whose filters are not turned, say).

    Returns:
      A ``Feedback``: truthy when the rule is right; shows itself in a notebook.
    """
    with np.errstate(all="ignore"):
        check = _Check(f, rules, inputs, seed, "vjp")
        check.slips = tuple(slips)
        return check.run()


def check_jvp(f, rules, inputs, seed=0):
    """Check JVP rules ``rule(x_dot, ans, *inputs)`` for ``f``: each returns its input's
    contribution to the output tangent (the output's shape). Arguments as ``check_vjp``."""
    with np.errstate(all="ignore"):
        return _Check(f, rules, inputs, seed, "jvp").run()


class _Check:
    def __init__(self, f, rules, inputs, seed, mode):
        where = f"tg.exercises.check_{mode}"
        self.f, self.mode = validate.callable_(f, "f", where), mode
        self.rules = list(rules) if isinstance(rules, (list, tuple)) else [rules]
        self.arrays = as_inputs(inputs, arity(f, len(self.rules)), where)
        validate.arity(f, len(self.arrays), "f", where)
        self.seed = validate.integer(seed, "seed", where, minimum=0)
        self.rng = np.random.default_rng(self.seed)
        self.h = rulecheck.step_size([np.float64])[0]
        try:
            self.ans = self.evaluate(self.arrays)[0]
        except (TypeError, ValueError) as error:
            said = str(error) if str(error).startswith("`f`") else \
                f"`f` cannot be checked at these inputs: {error}"
            raise type(error)(f"{where}: {said}") from error
        if not np.isfinite(backend.to_numpy(self.ans)).all():
            validate.fail(ValueError, where, "inputs", "a point where f is finite", inputs,
                          f"f gives {backend.to_numpy(self.ans)} there: pick a point inside "
                          f"its domain.")

    def evaluate(self, arrays):
        out = self.f(*[constant(a) for a in arrays])
        leaves = nest.flatten(out)
        if len(leaves) != 1 or not isinstance(leaves[0], Tensor):
            raise TypeError(f"`f` must return one tensor, but returned "
                            f"{type(out).__name__}.")
        return [backend.xp.asarray(leaves[0].value, dtype=np.float64)]

    def run(self):
        n = len(self.arrays)
        if len(self.rules) != n:
            return Feedback("wrong_count", f"f takes {n} input{'s' if n != 1 else ''}, so give "
                            f"{n} rule{'s' if n != 1 else ''} (one per input, None for an input "
                            f"without a gradient), not {len(self.rules)}.")
        for i, rule in enumerate(self.rules):
            if rule is not None and not callable(rule):   # a student's rule: said, not raised
                return Feedback("wrong_type", f"the rule for input {i} is {_a(rule)}, not a "
                                f"function: give a function rule(g, ans, *inputs) (x_dot first "
                                f"for a JVP), or None for an input without a gradient.", i)
        self.out_shape = tuple(self.ans.shape)
        self.g = read_only(self.rng.standard_normal(self.out_shape))   # a VJP rule's g
        try:
            for check in (self._check_vjp if self.mode == "vjp" else self._check_jvp,
                          self._elsewhere, self._again):
                for i, rule in enumerate(self.rules):
                    found = None if rule is None else check(i, rule)
                    if found is not None:
                        return found
        except Stopped as stop:
            return Feedback("stopped", stop.why)
        what = "VJP" if self.mode == "vjp" else "JVP"
        rules = f"your {what} rules match" if n > 1 else f"your {what} rule matches"
        return Feedback("right", f"{rules} finite differences at every entry, and can be "
                                 f"differentiated again.")

    def _call(self, rule, first, i):
        """Call the rule on read-only copies; returns (result, None) or (None, Feedback)."""
        xs = [constant(read_only(a)) for a in self.arrays]
        try:
            with student_code(f"the rule for input {i}", "rule"):
                return rule(constant(read_only(first)), constant(read_only(self.ans)),
                            *xs), None
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
                arity(rule, None) == len(self.arrays) + 1:
            return (f" A rule is called as rule({first}, ans, *inputs): ans, the output of f, "
                    f"comes second even where the rule does not use it. Did you leave it out?")
        if isinstance(error, ValueError) and "read-only" in str(error):
            return (" A rule must not change its inputs (they are the point where it is "
                    "checked): compute a new tensor instead of writing into x.numpy().")
        if not isinstance(error, ValueError) or "shape" not in str(error):
            return ""
        shapes = ", ".join(f"input {k} {tuple(a.shape)}" for k, a in enumerate(self.arrays))
        hint = (f" Line the shapes up: {first} has the output's shape {self.out_shape}; "
                f"{shapes}; the rule's result must have the shape of "
                f"{'input ' + str(i) if self.mode == 'vjp' else 'the output'}.")
        story = reduction_story(tuple(self.arrays[i].shape), self.out_shape)
        if self.mode == "vjp" and story:
            return hint + " " + story
        return hint + (" A product or a convolution may need an operand's axes reordered "
                       "first (tg.transpose).")

    # -- VJP ----------------------------------------------------------------------------
    def _check_vjp(self, i, rule):
        got, problem = self._call(rule, self.g, i)
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
        got_array, problem = result_array(got, i, f"the cotangent of input {i}, of its shape "
                                                  f"{tuple(self.arrays[i].shape)}")
        if problem is not None:
            return problem
        if got_array.shape != tuple(self.arrays[i].shape):
            return Feedback("wrong_shape", vjp_shape_story(i, got_array.shape,
                                                           tuple(self.arrays[i].shape),
                                                           self.out_shape), i)
        without_g = lambda: np.array(rulecheck.numeric_vjp_entries(   # noqa: E731
            self.evaluate, self.arrays, i, [backend.xp.ones(self.out_shape)], scale, self.h,
            self.arrays[i].size)).reshape(self.arrays[i].shape)
        wrong = compare(got_array, expected, i, "input", "J^T g", without_g,
                        "the derivative without the cotangent: multiply by g (the chain rule)",
                        kink=lambda entry: self._kink(i, entry),
                        itself=np.asarray(backend.to_numpy(self.g)) * np.asarray(
                            backend.to_numpy(self.ans)) if self.out_shape == tuple(
                            self.arrays[i].shape) else None)
        return self._slip(i, got_array, wrong)

    def _slip(self, i, got_array, wrong):
        """``wrong`` with the hint of the first known slip that gives what the rule gave."""
        for index, slip, hint in getattr(self, "slips", ()) if wrong is not None else ():
            if index != i:
                continue
            xs = [constant(read_only(a)) for a in self.arrays]
            made = slip(constant(read_only(self.g)), constant(read_only(self.ans)), *xs)
            made = np.asarray(backend.to_numpy(made.value if isinstance(made, Tensor)
                                               else made), dtype=np.float64)
            if made.shape == got_array.shape and np.allclose(made, got_array, rtol=1e-6,
                                                             atol=1e-9):
                return replace(wrong, message=f"{wrong.message} {hint}")
        return wrong

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
        got, problem = self._call(rule, t, i)
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
        got_array, problem = result_array(got, i, f"its contribution to the output's tangent, "
                                                  f"of the output's shape {self.out_shape}")
        if problem is not None:
            return problem
        if got_array.shape != self.out_shape:
            return Feedback("wrong_shape", jvp_shape_story(i, got_array.shape, x_shape,
                                                           self.out_shape), i)
        return compare(got_array, expected, i, "output", "J x_dot",
                        lambda: jt(np.ones(x_shape)),
                        "the derivative without the tangent: multiply by x_dot")

    def _elsewhere(self, i, rule):
        """Is the rule for input ``i`` right at a second point too (``elsewhere``)?"""
        return at_another_point(self, i, rule)

    def _again(self, i, rule):
        """Can the rule for input ``i`` be differentiated again (``again``)?"""
        try:
            with student_code(f"the rule for input {i}", "again"):
                return differentiable_again(self, i, rule)
        except Exception as error:     # noqa: BLE001 -- the rule, called again, raised
            return Feedback("not_differentiable_again", f"the rule for input {i} gives the "
                            f"right values, but differentiating it again failed: it raised "
                            f"{type(error).__name__}: {error}", i)
