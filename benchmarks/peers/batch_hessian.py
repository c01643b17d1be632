"""The batch Hessian of an LSTM cell by nested ``batch_jacobian``, vectorized and looped.

TensorFlow's ``GradientTape.batch_jacobian`` tests take an LSTM cell's per-example
Hessian as a batch_jacobian of a batch_jacobian. Here, for a batch of ``B`` inputs of
``D`` features and a cell of ``H`` units (float64, each example its own state), the
``[B, H, D, D]`` Hessian two ways:

* vectorized (``experimental_use_pfor=True``, the default, at both levels): the inner
  Jacobian is one backward pass mapped over the ``H`` seeds by ``tg.vmap``, the outer one
  maps the backward pass of *that* (the ``*_grad`` ops' batching rules at work) over the
  ``H * D`` seeds of the Jacobian;
* looped (``experimental_use_pfor=False`` at both levels): ``H`` backward passes for the
  Jacobian, then ``H * D`` backward passes through them (persistent tapes).

Both include their forward passes on the tapes. They are checked equal, then timed one
call each, interleaved; the table's row is the median per-repeat ratio vectorized / loop,
as for the Jacobian's row (teachgrad only: no peer runs this program here).

    .venv/bin/python benchmarks/peers/batch_hessian.py [--quick] [--json PATH]
"""
import common   # first: it limits the threads before numpy loads OpenBLAS
import numpy as np
import teachgrad as tg

B, D, H = 8, 6, 8
VECTORIZED, LOOPED = "vectorized", "loop"


def make_problem(seed=0):
    rng = np.random.default_rng(seed)
    return {"W": rng.standard_normal((D, 4 * H)) * 0.4, "U": rng.standard_normal((H, 4 * H)) * 0.4,
            "h": rng.standard_normal((B, H)) * 0.5, "c": rng.standard_normal((B, H)) * 0.5,
            "x": rng.standard_normal((B, D))}


def lstm_cell(x, p):
    z = tg.matmul(x, p["W"]) + tg.matmul(p["h"], p["U"])
    i, f, g, o = tg.split(z, 4, axis=1)
    c = tg.sigmoid(f) * p["c"] + tg.sigmoid(i) * tg.tanh(g)
    return tg.sigmoid(o) * tg.tanh(c)


def batch_hessian(p, use_pfor):
    x = p["x"]
    with tg.GradientTape(persistent=not use_pfor) as outer:
        outer.watch(x)
        with tg.GradientTape(persistent=not use_pfor) as inner:
            inner.watch(x)
            y = lstm_cell(x, p)
        jacobian = inner.batch_jacobian(y, x, experimental_use_pfor=use_pfor)
    return outer.batch_jacobian(jacobian, x, experimental_use_pfor=use_pfor)


def functions(problem):
    p = {name: tg.constant(value) for name, value in problem.items()}
    return {VECTORIZED: lambda: batch_hessian(p, True), LOOPED: lambda: batch_hessian(p, False)}


def main(argv=None):
    args = common.parser(__doc__.splitlines()[0]).parse_args(argv)
    fns = functions(make_problem())
    vectorized, looped = (fn().numpy() for fn in fns.values())
    assert vectorized.shape == (B, H, D, D), vectorized.shape
    common.check_close("the vectorized batch Hessian", vectorized, looped, 1e-10, 1e-12)
    print(f"checks: the vectorized batch Hessian [{B}, {H}, {D}, {D}] equals the loop's")
    warmup, repeats, budget = (1, 2, 5.0) if args.quick else (2, 20, 60.0)
    times = common.interleaved(fns, warmup, repeats, budget, lead_in=0)
    n = len(times[VECTORIZED])
    label = f"LSTM cell batch Hessian, B={B}, D={D}, H={H}, float64, {n} interleaved repeats"
    print(label)
    rows = common.against(times, fns, VECTORIZED)
    ratio = common.median_ratio(times, VECTORIZED, LOOPED)
    print(f"  vectorized / its loop: {ratio:.3f}x (loop / vectorized {1 / ratio:.1f}x)")
    return common.write(args, {"workload": "batch_hessian", "label": label, "repeats": n,
                               "rows": {"teachgrad": {"vs_loop": ratio,
                                                      "ms": rows[VECTORIZED]["ms"]}}})


if __name__ == "__main__":
    main()
