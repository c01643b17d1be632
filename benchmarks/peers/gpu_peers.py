"""Lesson 11's CNN step, one conv2d and per-example gradients on CuPy, against PyTorch CUDA.

    python benchmarks/peers/gpu_peers.py [--quick] [--json PATH]

Needs CuPy, an NVIDIA GPU and a PyTorch built with CUDA; without them it prints why
and reports nothing, so ``make bench`` still completes. The workloads are those of the
CPU tables, moved to the GPU unchanged (``cnn.py``, ``per_example.py``):

* ``step``: lesson 11's training step (float64, batch 32, Adam), teachgrad eager and
  as a ``tg.function`` under ``tg.backend.using("cupy")``, PyTorch on ``cuda``;
* ``conv2d``: one 3x3 SAME convolution, (32, 32, 32, 16) -> 32 channels, float32,
  forward and both cotangents;
* ``per-example``: the medium MLP's 64 per-example gradients (float64),
  ``tg.vmap(tg.grad(...))`` against ``torch.func.vmap(torch.func.grad(...))``.

PyTorch's TF32 is turned off, as CuPy's is by default: both multiply float32 in float32.
Every call ends with a device synchronize, so a time includes the kernels and not only
their launch. Each library's results are checked against teachgrad's on numpy (the
CPU) before timing. The report is each time and its ratio to PyTorch CUDA's (issue 34's
goal: the CNN step as a ``tg.function`` <= 1.5x).
"""
import common   # first: it limits the threads before numpy loads OpenBLAS
import cnn
import mlp_gradient as mlp
import numpy as np
import per_example_peers as pe

import teachgrad as tg

RTOL, ATOL = 1e-9, 1e-9


def _gpu_or_none():
    """(cupy, torch) when both reach a GPU; else None, with the reason noted."""
    try:
        with tg.backend.using("cupy"):
            pass
    except RuntimeError as error:
        return _skip(f"no CuPy GPU here: {error}")
    torch = common.load("torch")
    if torch is None or not torch.cuda.is_available():
        return _skip("no PyTorch with CUDA here")
    import cupy
    # CuPy multiplies float32 in float32; PyTorch's convolutions would use TF32 by default
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    return cupy, torch


def _skip(note):
    print("note: skipped the GPU rows: " + note)
    common._notes.append(note)
    return None


def _synced(fn, sync, on_cupy):
    def run():
        if on_cupy:
            with tg.backend.using("cupy"):
                out = fn()
        else:
            out = fn()
        sync()
        return out
    return run


def step_fns(rng, torch, sync):
    x, y = rng.random((cnn.BATCH, 8, 8, 1)), rng.integers(0, 10, cnn.BATCH)
    weights = cnn._weights(rng)
    on_cpu = cnn.TeachgradStep(weights, x, y)
    with tg.backend.using("cupy"):
        on_gpu = cnn.TeachgradStep(weights, x, y)
        loss, grads = on_gpu.loss_and_grads(on_gpu.x, on_gpu.y)
    want_loss, want_grads = on_cpu.loss_and_grads(on_cpu.x, on_cpu.y)
    common.check_close("teachgrad CuPy CNN loss", loss.numpy(), want_loss.numpy(), 1e-9, 1e-12)
    common.check_close("teachgrad CuPy CNN gradients", [g.numpy() for g in grads],
                       [g.numpy() for g in want_grads], 1e-7, 1e-9)
    torch_step = cnn.TorchStep(torch, weights, x, y, device="cuda")
    cnn.check_step(on_cpu, torch_step)
    return {"teachgrad": _synced(on_gpu.eager, sync, True),
            "teachgrad tg.function": _synced(on_gpu.function, sync, True),
            "torch": _synced(torch_step.step, sync, False)}


def conv_fns(rng, torch, sync):
    with tg.backend.using("cupy"):
        fns = cnn.conv_workload(rng, torch, np.float32, device="cuda")
    return {"teachgrad": _synced(fns["teachgrad"], sync, True),
            "torch": _synced(fns["torch"], sync, False)}


def per_example_fns(torch, sync):
    p = mlp.make_problem(mlp.CONFIGS[0])
    want = pe.numpy_per_example(p)
    with tg.backend.using("cupy"):
        tgad = pe.Teachgrad(p)
        common.check_close("teachgrad CuPy per-example gradients",
                           tgad.host(tgad.per_example()), want, RTOL, ATOL)
    peer = pe.Torch(p, device="cuda")
    common.check_close("torch CUDA per-example gradients", peer.host(peer.per_example()), want,
                       RTOL, ATOL)
    return {"teachgrad": _synced(tgad.per_example, sync, True),
            "torch": _synced(peer.per_example, sync, False)}


def main(argv=None):
    args = common.parser(__doc__.splitlines()[0]).parse_args(argv)
    found = _gpu_or_none()
    if found is None:
        return common.write(args, {"workload": "gpu_peers", "rows": {}})
    cupy, torch = found
    sync = cupy.cuda.Device().synchronize     # waits for PyTorch's kernels too
    rng = np.random.default_rng(0)
    workloads = (("step", step_fns(rng, torch, sync)), ("conv2d", conv_fns(rng, torch, sync)),
                 ("per-example", per_example_fns(torch, sync)))
    device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"checks: teachgrad on CuPy and PyTorch CUDA agree with teachgrad on numpy ({device})")
    warmup, repeats, budget = (1, 3, 2.0) if args.quick else (10, 200, 30.0)
    rows = {}
    for workload, fns in workloads:
        times = common.interleaved(fns, warmup, repeats, budget, lead_in=0)
        print(f"{workload}: ms per call (median of {len(times['torch'])}), "
              f"ratio to PyTorch CUDA's time")
        for name in fns:
            row = {"ms": common.median_ms(times[name]),
                   "vs_torch": common.median_ratio(times, name, "torch")}
            rows[f"{workload}: {name}"] = row
            print(f"  {name:24s} {row['ms']:8.3f} ms   {row['vs_torch']:5.2f}x torch")
    return common.write(args, {"workload": "gpu_peers", "device": device, "rows": rows})


if __name__ == "__main__":
    main()
