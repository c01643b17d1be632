"""Large MLP gradient (784-2048-2048-10, batch 1024, float32) / hand-written numpy.

    .bench-venv/bin/python benchmarks/peers/mlp_large.py [--quick] [--json PATH]

teachgrad (eager and tg.function), PyTorch, JAX (jit and not), HIPS autograd,
each checked against numpy first, then timed interleaved in one process.
"""
import mlp_workload

if __name__ == "__main__":
    mlp_workload.main("B", __doc__.splitlines()[0])
