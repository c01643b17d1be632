"""Where the medium MLP's eager gradient spends what numpy by hand does not.

    .venv/bin/python benchmarks/mlp_split.py [--quick] [--repeats N]

The same network at two sizes, timed in one process, calls interleaved
(``common.interleaved``, one thread pinned to one core as in ``make bench``):

* the medium MLP of the table (784-256-256-10, batch 64, float64);
* a tiny one (3-4-4-2, batch 4), whose kernels take next to nothing: what teachgrad
  costs over numpy there is the Python of the structure (12 recorded ops, their 12
  rules, the engine, ``tape.gradient``), the same Python the medium MLP pays.

Each is run three ways: numpy by hand, teachgrad eagerly (a ``GradientTape``) and as a
``tg.function`` (its traced plan runs the same rules' kernels with about a microsecond of
Python each). The medium MLP's eager gap to numpy, less the tiny MLP's, is then what
its kernels cost beyond numpy's hand-fused pass. Gradients are checked against numpy's
first (``mlp_gradient.check_gradients``).
"""
import dataclasses
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
import common  # noqa: E402  (limits the threads before numpy loads)
import mlp_gradient as mlp  # noqa: E402

TINY = dataclasses.replace(mlp.CONFIGS[0], name="tiny", batch=4, sizes=(3, 4, 4, 2))


def main(argv=None):
    parser = common.parser(__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=500)
    args = parser.parse_args(argv)
    fns = {}
    for cfg in (mlp.CONFIGS[0], TINY):
        p = mlp.make_problem(cfg)
        mlp.check_gradients(p)
        fns[(cfg, "numpy")] = lambda p=p: mlp.numpy_gradient(p)
        fns[(cfg, "eager")] = lambda p=p: mlp.teachgrad_gradient(p)
        fns[(cfg, "tg.function")] = lambda p=p: mlp.graph_gradient(p)   # traced on first call
    warmup, repeats = (2, 5) if args.quick else (20, args.repeats)
    times = common.interleaved(fns, warmup, repeats, budget_s=120.0)
    us = {key: common.median_ms(t) * 1e3 for key, t in times.items()}
    print(f"µs per gradient (median of {len(times[next(iter(times))])} interleaved repeats),"
          f" ratio to numpy; load average {os.getloadavg()[0]:.2f}")
    for cfg in (mlp.CONFIGS[0], TINY):
        label = f"{'-'.join(map(str, cfg.sizes))}, batch {cfg.batch}"
        cells = "  ".join(f"{way} {us[(cfg, way)]:8.1f} "
                          f"({common.median_ratio(times, (cfg, way), (cfg, 'numpy')):.2f}x)"
                          for way in ("numpy", "eager", "tg.function"))
        print(f"  {label:26s} {cells}")
    medium, tiny = mlp.CONFIGS[0], TINY
    gap = us[(medium, "eager")] - us[(medium, "numpy")]
    python = us[(tiny, "eager")] - us[(tiny, "numpy")]
    print(f"  medium MLP's eager gap to numpy {gap:.0f} µs: the structure's Python (the tiny "
          f"MLP's gap) {python:.0f} µs, the rest (by difference: kernels beyond numpy's) "
          f"{gap - python:.0f} µs")


if __name__ == "__main__":
    main()
