"""Lessons 1-11's exercises, by their contracts (``contracts``): what each answer is, and
the answers the lesson's text accepts or the values alone would not show as wrong.

Their check cells are the lessons' own code: each fetches the answer with
``tg.exercises.answer(name)`` (which guards a function's calls, ``answers``) and checks it
on inputs it makes after the answer was defined, so ``check`` is None here. Several answers
may share one check cell (``left`` and ``right`` of lesson 5). The fooler test
(tests/test_exercise_foolers.py) runs every one of them against the catalogue of foolers.
"""
from .contracts import Contract, register_contract


def _contract(name, lesson, number, kind, cell, expect, **more):
    return register_contract(Contract(name, lesson=lesson, number=number, kind=kind,
                                      cell=cell, expect=expect, **more))


def _predicted(name, lesson, number, cell, expect, **more):
    return _contract(name, lesson, number, "prediction", cell, expect, **more)


_contract("h_backward", 1, 1, "function", "l01-ex1-check",
          "a function h_backward(x) that returns dy/dx, worked out backwards from y_bar = 1",
          returns="number")
_contract("softplus_vjp", 1, 2, "rule", "l01-ex2-check",
          "the VJP rule softplus_vjp(g, ans, x), returning the cotangent of x",
          accepted={"from the output, 1 - exp(-ans)": (
              "def softplus_vjp(g, ans, x):\n    return g * (1 - tg.exp(-ans))\n")})
_predicted("predicted_counts", 2, 1, "l02-ex1-check",
           'a dict from node name to pending count, {"p": ..., "q": ..., ...}', returns="dict")
_contract("replay", 2, 2, "function", "l02-ex2-check",
          "a function replay(trace, source) that returns the sum of the contributions handed "
          "to source", returns="number",
          forbidden={"the lesson's own gradient, whatever it is given": (
              "def replay(trace, source):\n    return float(dt_dx)\n")})
_predicted("predicted_adds", 2, 3, "l02-ex3-check",
           "a number: how many more add ops EXPERIMENTAL_TREE adds than ADD_N", returns="number")
_predicted("predicted_add_ns", 2, 3, "l02-ex3-check",
           "a number: how many more add_n ops ADD_N adds than EXPERIMENTAL_TREE",
           returns="number")
_predicted("predicted_pops", 2, 4, "l02-ex4-check",
           'a list of the node names in the order they are popped, ["t", ...]',
           words=("p", "q", "r", "s", "t"), returns="list")
_contract("count_pending", 3, 1, "function", "l03-ex1-check",
          "a function count_pending(target, producer) that returns a dict from node to "
          "pending count", returns="dict")
_contract("backward", 3, 2, "function", "l03-ex2-check",
          "a function backward(target, sources, producer) that returns one gradient per "
          "source", needs=(("count_pending", 1),))
_predicted("predicted_nodes", 4, 1, "l04-ex1-check",
           'a Counter of operation names, Counter({"name": count, ...})', returns="dict")
for _name in ("total_dx", "partial_dx", "partial_dy"):
    _contract(_name, 4, 2, "value", "l04-ex2-check", "a tensor of the graph, from tg.gradients",
              returns="graph tensor")
for _of in "xy":
    _contract(f"hypot_vjp_{_of}", 4, 3, "rule", "l04-ex3-rules-check",
              f"the VJP rule of hypot for {_of}, hypot_vjp_{_of}(g, ans, x, y)")
_predicted("predicted_rule_nodes", 4, 4, "l04-ex3-nodes-check",
           'a Counter of operation names, Counter({"name": count, ...})', returns="dict")
_contract("logcosh_jvp", 5, 1, "rule", "l05-ex1-check",
          "the JVP rule logcosh_jvp(x_dot, ans, x), returning the output tangent")
_predicted("predicted_passes", 5, 2, "l05-ex2-check",
           "a dict from each example's name to (jacfwd passes, jacrev passes)", returns="dict")
_contract("left", 5, 3, "value", "l05-ex3-check",
          "a float: <J x_dot, u>, with J x_dot from tg.jvp", returns="number")
_contract("right", 5, 3, "value", "l05-ex3-check",
          "a float: <x_dot, J^T u>, with J^T u from tg.vjp", returns="number")
_contract("tanh_jvp_by_transposing", 5, 4, "rule", "l05-ex4-check",
          "a JVP rule (x_dot, ans, x) that transposes tanh_vjp on a tape")
_contract("cube_vjp", 6, 1, "rule", "l06-ex1-check",
          "the VJP rule cube_vjp(g, ans, x), written with teachgrad operations only")
_contract("hvp_reverse_over_reverse", 6, 2, "function", "l06-ex2-check",
          "a function (f, x, v) that returns H v with two nested tapes", returns="tensor",
          forbid=("hvp", "hessian", "jacfwd", "jacrev"),
          forbidden={"tg.hvp, not two tapes": (
              "def hvp_reverse_over_reverse(f, x, v):\n    return tg.hvp(f, [x], [v])[0]\n")})
_contract("ds_dx", 7, 1, "value", "l07-ex1-check",
          "a number: ds/dx at x = 0.5, computed with a GradientTape", returns="number")
_predicted("predicted_saved", 7, 2, "l07-ex2-check",
           'a set of names drawn from "k", "term", "total" and "x"',
           words=("k", "term", "total", "x"), returns="set")
_contract("abs_cond", 7, 3, "function", "l07-ex3-check",
          "a function abs_cond(x) built with tg.cond", returns="tensor")
_predicted("predicted_iterations", 7, 4, "l07-ex4-check",
           "a whole number: the iterations grow(2.0) runs", returns="number")
_predicted("predicted_slope", 7, 4, "l07-ex4-check", "a number: dy/dx of grow at x = 2",
           returns="number")
_contract("log1pexp_vjp", 8, 1, "rule", "l08-ex1-check",
          "the VJP rule log1pexp_vjp(g, ans, x), returning the cotangent of x")
_contract("safe_norm", 8, 2, "function", "l08-ex2-check",
          "a @tg.custom_gradient function that returns (the norm, grad_fn)", returns="tensor")
_contract("sign_ste", 8, 3, "function", "l08-ex3-check",
          "a @tg.custom_gradient function that returns (tg.sign(x), grad_fn)",
          returns="tensor")
for _of in "xy":
    _contract(f"my_matmul_vjp_{_of}", 9, 1, "rule", "l09-ex1-check",
              f"the VJP rule of my_matmul for {_of.upper()}, rule(g, ans, x, y)")
_predicted("backward_flops", 9, 2, "l09-ex2-check",
           "a number: the flops of both rules, from flops(...) of their products",
           returns="number")
_predicted("my_count", 9, 3, "l09-ex3-check", "a number: how many operations loss_fn runs",
           returns="number")
_contract("softmax_cross_entropy_vjp", 10, 1, "rule", "l10-ex1-check",
          "the VJP rule (g, ans, logits, onehot), returning the cotangent of logits")
_contract("loss_with_decay", 10, 2, "function", "l10-ex2-check",
          "a function (params, x, onehot, lam) that returns the loss with weight decay",
          returns="tensor",
          forbidden={"decays the biases too": (
              "def loss_with_decay(params, x, onehot, lam):\n"
              "    return loss_fn(params, x, onehot) + lam * sum(tg.sum(p * p) for p in params)\n")})
_contract("conv2d_input_vjp", 11, 1, "rule", "l11-ex1-check",
          "the VJP rule (g, ans, x, w) of conv2d for its input x")
_contract("conv2d_filters_vjp", 11, 2, "rule", "l11-ex2-check",
          "the VJP rule (g, ans, x, w) of conv2d for its filters w")
