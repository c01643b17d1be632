"""Per-example gradients of the medium MLP loss, for teachgrad and each peer.

    .bench-venv/bin/python benchmarks/peers/per_example.py [--quick] [--json PATH]

The gradient of each of the 64 examples' losses of ``mlp_medium.py``'s problem
(784-256-256-10, float64) with respect to every weight and bias, stacked
(``per_example_peers.py`` gives the loss and each library's code). Timed, interleaved
in one process:

* teachgrad ``tg.vmap(tg.grad(loss, argnums=...), in_axes=(None, ..., 0, 0))``;
* teachgrad, the same in a ``tg.function`` (traced once before timing: jit's peer);
* teachgrad, a Python loop of ``tg.grad`` over the 64 examples, stacked;
* teachgrad's ordinary batch gradient (``mlp_medium.py``'s): issue 28's goal is the
  vectorized per-example gradients in at most 1.5x its time;
* hand-written numpy per-example gradients (outer products by broadcasting), the
  floor: the per-example weight gradients are 64 times the output of one batch
  gradient (about 104 MB), and numpy's batch gradient, to show what that costs;
* ``jax.vmap(jax.grad(loss))``, jitted and not (goal: teachgrad within 1.3x of the
  one not jitted), and ``torch.func.vmap(torch.func.grad(loss))``.

Every library's per-example gradients are checked against numpy's first, and
numpy's mean over the examples against its batch gradient.
"""
import common   # first: it limits the threads before numpy loads OpenBLAS
import mlp_gradient as mlp
import per_example_peers as pe

RTOL, ATOL = 1e-9, 1e-9     # float64; atol relative to each gradient's largest entry


def main(argv=None):
    args = common.parser(__doc__.splitlines()[0]).parse_args(argv)
    p = mlp.make_problem(mlp.CONFIGS[0])
    want = pe.numpy_per_example(p)
    _, batch = mlp.numpy_gradient(p)
    common.check_close("numpy per-example mean", [g.mean(axis=0) for g in want], batch,
                       RTOL, ATOL)

    tgad = pe.Teachgrad(p)
    libraries = {"teachgrad": tgad, **pe.peers(p)}
    calls = {"teachgrad loop": (tgad.loop, tgad.host),
             "teachgrad tg.function": (tgad.function_per_example, tgad.host),
             **{name: (lib.per_example, lib.host) for name, lib in libraries.items()}}
    fns = {"numpy": lambda: pe.numpy_per_example(p), "numpy batch": lambda: mlp.numpy_gradient(p),
           "teachgrad batch": tgad.batch_gradient,
           **common.checked(calls, want, "per-example gradients", RTOL, ATOL)}
    print(f"checks: {len(libraries)} libraries' per-example gradients (and teachgrad's loop) "
          f"agree with numpy's")

    warmup, repeats, budget, lead_in = (1, 3, 2.0, 0) if args.quick else (2, 40, 60.0, 1)
    times = common.interleaved(fns, warmup, repeats, budget, lead_in=lead_in)
    n = len(times["numpy"])
    label = f"per-example gradients of the medium MLP loss, 64 examples, {n} interleaved repeats"
    print(label)
    rows = common.against(times, ("numpy", *libraries, "teachgrad tg.function",
                                  "teachgrad loop"), "numpy")
    for name in ("numpy", "teachgrad"):    # per-example / the same library's batch gradient
        rows[name]["vs_batch"] = common.median_ratio(times, name, f"{name} batch")
        rows[name]["batch_ms"] = common.median_ms(times[f"{name} batch"])
    rows["teachgrad"]["vs_loop"] = common.median_ratio(times, "teachgrad", "teachgrad loop")
    if "jax" in times:
        rows["teachgrad"]["vs_jax"] = common.median_ratio(times, "teachgrad", "jax")
    for name in ("numpy", "teachgrad"):
        print(f"  {name} per-example / its batch gradient ({rows[name]['batch_ms']:.2f} ms): "
              f"{rows[name]['vs_batch']:.1f}x")
    for key, what in (("vs_loop", "teachgrad's loop"), ("vs_jax", "jax.vmap, not jitted")):
        if key in rows["teachgrad"]:
            print(f"  teachgrad vmap / {what}: {rows['teachgrad'][key]:.2f}x")
    return common.write(args, {"workload": "per_example", "label": label, "repeats": n,
                               "rows": rows})


if __name__ == "__main__":
    main()
