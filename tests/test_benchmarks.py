"""The benchmark scripts still run and their correctness checks pass (no timing asserted)."""
import pathlib
import subprocess
import sys

import pytest

BENCHMARKS = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.mark.parametrize("script", ["mlp_gradient.py", "forward_mode.py", "recompute_grad.py",
                                    "while_loop.py", "stepper_frames.py", "graph_fusion.py",
                                    "draw_graph.py", "chain_split.py", "bind_paths.py",
                                    "cnn_split.py", "mlp_split.py",
                                    "gpu_fusion.py", "peers/run.py", "peers/cnn.py",
                                    "peers/gpu_peers.py", "gpu_conv_formulations.py",
                                    "conv_formulations.py",
                                    "vectorized_jacobian.py", "peers/batch_hessian.py"])
def test_benchmark_runs_quick(script):
    result = subprocess.run([sys.executable, str(BENCHMARKS / script), "--quick"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]

