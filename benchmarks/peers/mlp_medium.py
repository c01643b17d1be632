"""Medium MLP gradient (784-256-256-10, batch 64, float64) / hand-written numpy.

    .bench-venv/bin/python benchmarks/peers/mlp_medium.py [--quick] [--json PATH]

teachgrad (eager and tg.function), PyTorch, JAX (jit and not), HIPS autograd,
each checked against numpy first, then timed interleaved in one process.
"""
import mlp_workload

if __name__ == "__main__":
    mlp_workload.main("A", __doc__.splitlines()[0])
