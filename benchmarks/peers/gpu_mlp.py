"""Large MLP gradient on the GPU (CuPy backend) against hand-written numpy on the CPU.

    .bench-venv/bin/python benchmarks/peers/gpu_mlp.py [--quick] [--json PATH]

Needs CuPy and an NVIDIA GPU (``pip install 'teachgrad[gpu]'``); without them it
prints why and reports nothing, so ``make bench`` still completes.

The problem is ``mlp_large.py``'s (784-2048-2048-10, batch 1024, float32). It
times, interleaved in one process, one gradient:

* ``numpy``: hand-written numpy on the CPU (the reference, 1.0);
* ``teachgrad cupy``: a ``tg.GradientTape`` with ``tg.backend.using("cupy")``;
* ``teachgrad cupy tg.function``: the same as a traced ``tg.function``;
* ``cupy by hand``: the hand-written forward and backward pass on CuPy arrays
  (the GPU floor);
* ``pytorch cuda``: the same network in PyTorch on the same GPU (``torch.autograd.grad``),
  where PyTorch has CUDA.

Each GPU call ends with a device synchronize, so the time includes the kernels
and not only their launch. The report is the speed-up, numpy time / GPU time
(the goal for teachgrad on CuPy: at least 20x, and within 1.3x of PyTorch CUDA). Every GPU gradient is copied to
the host and checked against numpy's before timing.
"""
import dataclasses

import common
import mlp_gradient as mlp
import mlp_peers
import teachgrad as tg

RTOL, ATOL = 1e-3, 1e-4


def main(argv=None):
    args = common.parser(__doc__.splitlines()[0]).parse_args(argv)
    label = "large MLP gradient (784-2048-2048-10, batch 1024, float32): GPU speed-up over numpy"
    try:
        with tg.backend.using("cupy"):
            pass
    except RuntimeError as error:
        note = f"skipped the GPU benchmark: {error}"
        print("note: " + note)
        common._notes.append(note)
        return common.write(args, {"workload": "gpu", "label": label, "rows": {}})
    import cupy

    cfg = mlp.CONFIGS[1]
    p = mlp.make_problem(cfg)
    sync = cupy.cuda.Device().synchronize
    ref = mlp_peers.Numpy(p, *mlp_peers.directions(p))
    want_loss, want_grads = ref.gradient()

    with tg.backend.using("cupy"):
        tg_params = [tg.Variable(w, name=v.name) for w, v in zip(p.weights, p.tg_params)]
        gpu = dataclasses.replace(p, tg_x=tg.constant(p.x), tg_params=tg_params)
    gpu.graph_step = mlp.make_graph_step(gpu)
    floor = dataclasses.replace(
        p, x=cupy.asarray(p.x), labels=cupy.asarray(p.labels), onehot=cupy.asarray(p.onehot),
        rows=cupy.asarray(p.rows), weights=[cupy.asarray(w) for w in p.weights])

    def synced(fn, problem):
        def run():
            with tg.backend.using("cupy"):
                out = fn(problem)
            sync()
            return out
        return run

    candidates = {"teachgrad cupy": (synced(mlp.teachgrad_gradient, gpu), _tg_host),
                  "teachgrad cupy tg.function": (synced(mlp.graph_gradient, gpu), _tg_host),
                  "cupy by hand": (synced(mlp.numpy_gradient, floor), _cupy_host)}
    candidates.update(_torch_cuda(p))
    fns, failed = {"numpy": ref.gradient}, {}
    for name, (fn, host) in candidates.items():
        try:
            loss, grads = host(fn())
            common.check_close(f"{name} loss", loss, want_loss, RTOL, ATOL)
            common.check_close(f"{name} gradient", grads, want_grads, RTOL, ATOL)
        except Exception as error:  # report a backend bug instead of stopping `make bench`
            failed[name] = f"{type(error).__name__}: {error}"
            print(f"FAILED {name}: {failed[name]}")
            continue
        fns[name] = fn
    print(f"checks: {len(fns) - 1} GPU gradients agree with numpy's")

    warmup, repeats, budget = (1, 3, 2.0) if args.quick else (3, 50, 60.0)
    times = common.interleaved(fns, warmup, repeats, budget, lead_in=0)
    n = len(times["numpy"])
    print(f"{label}, {n} interleaved repeats ({cupy.cuda.runtime.getDeviceProperties(0)['name']})")
    rows = {}
    for name in fns:
        speedup = 1 / common.median_ratio(times, name, "numpy")
        rows[name] = {"ms": common.median_ms(times[name]), "speedup": speedup}
        vs_torch = ""
        if "pytorch cuda" in times and name != "numpy":
            rows[name]["vs_torch"] = common.median_ratio(times, name, "pytorch cuda")
            vs_torch = f"   {rows[name]['vs_torch']:5.2f}x PyTorch CUDA's time"
        print(f"  {name:28s} {rows[name]['ms']:9.3f} ms   {speedup:7.1f}x numpy{vs_torch}")
    return common.write(args, {"workload": "gpu", "label": label, "repeats": n, "rows": rows,
                               "failed": failed})


def _torch_cuda(p):
    """PyTorch's autograd on the same GPU, when this machine's PyTorch has CUDA."""
    try:
        torch_peer = mlp_peers.Torch(p, *mlp_peers.directions(p), device="cuda")
    except Exception as error:  # no PyTorch, or a PyTorch built without CUDA
        note = f"no PyTorch CUDA row: {type(error).__name__}: {error}"
        print("note: " + note)
        common._notes.append(note)
        return {}
    sync = torch_peer.torch.cuda.synchronize

    def run():
        out = torch_peer.gradient()
        sync()
        return out

    def host(result):
        loss, grads = result
        return loss.detach().cpu().numpy(), [g.cpu().numpy() for g in grads]
    return {"pytorch cuda": (run, host)}


def _tg_host(result):
    loss, grads = result
    return loss.numpy(), [g.numpy() for g in grads]


def _cupy_host(result):
    loss, grads = result
    return loss.get(), [g.get() for g in grads]


if __name__ == "__main__":
    main()
