"""Which of conv2d's kernel formulations runs fastest on the GPU, for each convolution the
GPU rows of ``peers/gpu_peers.py`` make.

    python benchmarks/gpu_conv_formulations.py [--quick]

Needs CuPy and an NVIDIA GPU (it says so and stops where there is none). It records the
convolutions (``conv_kernels.convolve``'s shapes) of one conv2d forward and backward pass
of the benchmark's (32, 32, 32, 16) -> 32 float32 convolution and of lesson 11's CNN step,
times every formulation of ``conv_kernels.FORMULATIONS`` on each (median of synchronized
calls), and prints which one ``conv_kernels.choose`` picks beside the fastest. The choice
was made on the CPU (numpy, cache-bound copies); this is how it is checked on a GPU.
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
import common  # noqa: E402  (limits the threads before numpy loads)
import cnn  # noqa: E402
import numpy as np  # noqa: E402

import teachgrad as tg  # noqa: E402
from teachgrad.ops.nn import conv_kernels  # noqa: E402


def recorded_convolutions(backend="cupy"):
    """{(x shape, w shape, strides, dilations, out): (x, w)} of both workloads, recorded
    on ``backend`` from the formulation calls ``conv_kernels.convolve`` makes."""
    seen, formulations = {}, dict(conv_kernels.FORMULATIONS)

    def recording(f):
        def run(x, w, strides, dilations, out):
            key = (x.shape, w.shape, tuple(strides), tuple(dilations), tuple(out))
            seen.setdefault(key, (x.copy(), w.copy()))
            return f(x, w, strides, dilations, out)
        return run
    rng = np.random.default_rng(0)
    conv_kernels.FORMULATIONS.update({k: recording(f) for k, f in formulations.items()})
    try:
        with tg.backend.using(backend):
            cnn.conv_workload(rng, None)["teachgrad"]()
            x, y = rng.random((cnn.BATCH, 8, 8, 1)), rng.integers(0, 10, cnn.BATCH)
            step = cnn.TeachgradStep(cnn._weights(rng), x, y)
            step.loss_and_grads(step.x, step.y)
    finally:
        conv_kernels.FORMULATIONS.update(formulations)
    return seen


def median_ms(fn, sync, repeats):
    fn()
    sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def main(argv=None):
    args = common.parser(__doc__.splitlines()[0]).parse_args(argv)
    try:
        with tg.backend.using("cupy"):
            pass
    except RuntimeError as error:
        print(f"note: no CuPy GPU here: {error}")
        return {}
    import cupy
    sync = cupy.cuda.Device().synchronize
    repeats = 3 if args.quick else 30
    fastest = {}
    with tg.backend.using("cupy"):
        for key, (x, w) in recorded_convolutions().items():
            x_shape, w_shape, strides, dilations, out = key
            times = {name: median_ms(lambda f=f: f(x, w, strides, dilations, out), sync,
                                     repeats)
                     for name, f in conv_kernels.FORMULATIONS.items()}
            chosen = conv_kernels.choose(*key, x.itemsize)
            fastest[key] = min(times, key=times.get)
            cells = "  ".join(f"{name} {ms:7.3f}" for name, ms in times.items())
            print(f"x {x_shape} w {w_shape} out {out} {x.dtype}: {cells} ms; "
                  f"chosen: {chosen}, fastest: {fastest[key]}")
    return fastest


if __name__ == "__main__":
    main()
