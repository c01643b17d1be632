"""What each fast path on an op's way through ``bind`` pays, in ns per op.

    .venv/bin/python benchmarks/bind_paths.py [--quick]

``bind`` (``teachgrad/ops/core/apply.py``) and the tape's ``record`` run once per op, so a few
of their steps are written for the common case ahead of the general code. Each must
pay for the lines it adds: this script times each fast path against the general code
it stands in front of, on the chain's values (float64 scalars, as in
``benchmarks/chain_split.py``), and prints both beside the whole op's cost.

* ``arity``: bind reads one or two inputs' arrays by name, not through a list;
* ``two inputs``: ``convert_inputs`` (``teachgrad/ops/core/inputs.py``) unpacks ``x * 2.0``'s pair, not a loop;
* ``number``: ``as_input`` makes a Python number beside a float tensor a numpy
  scalar of its dtype, ahead of ``convert_to_tensor``'s checks;
* ``scalar relu``: relu's kernel branches in Python on a numpy scalar, not
  ``np.maximum``; ``numpy scalars``: ``backend.scalar`` makes numpy scalars, whose
  arithmetic is numpy's fast path, not 0-d arrays.

The process is pinned to one core when the platform allows it.
"""
import argparse
import os
import statistics
import timeit

import numpy as np

import teachgrad as tg
from teachgrad.ops.core import inputs as core
from teachgrad.ops.elementwise.arithmetic import multiply_p
from teachgrad.ops.nn.activations import _relu_kernel
from teachgrad.tensor import Tensor, convert_to_tensor


def timer(repeats, number):
    def ns(statement):
        """Median ns per call of ``statement`` (a function of no arguments)."""
        runs = timeit.repeat(statement, repeat=repeats, number=number)
        return statistics.median(runs) / number * 1e9
    return ns


def pairs():
    """(name, fast path, general code): each a function of no arguments to time."""
    x = tg.constant(0.5) * 1.0            # a numpy-scalar value, as the chain's are
    c = tg.constant(1.0001) * 1.0
    args = (x, c)
    value = x.value
    zero_d = np.asarray(0.5)

    def general_values():
        return multiply_p.forward(*[t.value for t in args])

    def general_convert(pair=(x, 1.0001)):   # convert_inputs' loop for any count
        like = None
        for a in pair:
            if isinstance(a, Tensor):
                like = a
                break
        return tuple([a if type(a) is Tensor else core.as_input(a, like) for a in pair])
    return [
        ("arity", lambda: multiply_p.forward(args[0].value, args[1].value), general_values),
        ("two inputs", lambda: core.convert_inputs((x, 1.0001)), general_convert),
        ("number", lambda: core.as_input(1.0001, x),
         lambda: convert_to_tensor(1.0001, x)),
        ("scalar relu", lambda: _relu_kernel(value), lambda: np.maximum(value, 0)),
        ("numpy scalars", lambda: value * value, lambda: zero_d * zero_d),
    ]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a few repeats (a smoke test)")
    args = p.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    ns = timer(3 if args.quick else 15, 2000 if args.quick else 50000)
    x = tg.constant(0.5) * 1.0
    c = tg.constant(1.0001) * 1.0
    op_costs = {"x * c": ns(lambda: x * c), "x * 1.0001": ns(lambda: x * 1.0001)}
    print("one op, no tape, ns: " + ", ".join(f"{k} {v:.0f}" for k, v in op_costs.items()))
    print(f"{'fast path':14s} {'fast':>7s} {'general':>8s} {'saves':>7s}   (ns per op)")
    for name, fast, general in pairs():
        a, b = ns(fast), ns(general)
        print(f"{name:14s} {a:7.0f} {b:8.0f} {b - a:7.0f}")


if __name__ == "__main__":
    main()
