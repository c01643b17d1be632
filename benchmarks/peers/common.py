"""What the peer benchmarks share: loading peers, the MLP problem, timing, results.

Every workload script in this folder:

1. builds one problem (fixed seed) and, for each library that is installed, the
   same computation written the way that library's users write it;
2. checks each library's answer against hand-written numpy before timing
   anything (a mismatch stops the script with an error);
3. times the libraries in one process, interleaved: each repeat calls every
   function once (after one untimed call of the same function, see
   ``interleaved``), in an order shuffled per repeat (fixed seed), so machine
   noise hits all alike; the garbage collector stays on; each library gets one
   thread, the process pinned to one core (``THREADS`` below);
4. prints its numbers and, with ``--json PATH``, writes them for ``run.py``.

A ratio is taken within each repeat (``t_library / t_reference`` of the same
repeat) and the median over repeats is reported: the "median of ratios measured
in one run" that the goals are stated in.
"""
import os

# -- threads: set before numpy, torch or jax is imported ------------------------------------
#: CPU threads each library may use (TEACHGRAD_BENCH_THREADS; 0 leaves every library's
#: own default). With 1, the default, the process is also pinned to one core: JAX sizes
#: its thread pool by the cores it may run on, and no environment variable limits it.
#: On a small machine, libraries measured in one process otherwise slow each other
#: down: the thread pools of OpenBLAS (numpy) and OpenMP (torch) keep spinning after a
#: call and take the cores from whichever library runs next.
THREADS = int(os.environ.get("TEACHGRAD_BENCH_THREADS", "1"))
if THREADS > 0:
    if "numpy" in __import__("sys").modules:   # too late: OpenBLAS sized its pool already
        raise ImportError("import benchmarks/peers/common.py before numpy: it limits the "
                          "threads, which OpenBLAS reads once, when numpy loads it")
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = str(THREADS)
    if hasattr(os, "sched_setaffinity"):
        _cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, _cpus[-THREADS:])

import argparse  # noqa: E402
import gc  # noqa: E402
import importlib  # noqa: E402
import importlib.metadata  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))         # benchmarks/: mlp_gradient.py
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))   # the checkout: teachgrad

import numpy as np  # noqa: E402

# -- peers ----------------------------------------------------------------------------
#: Import name of each peer, and the pip requirement that provides it.
PEERS = {"torch": "torch==2.13.0", "jax": "jax jaxlib", "autograd": "autograd",
         "micrograd": "micrograd"}
_notes = []


def load(name):
    """The peer's module, or None (with a note printed once) when it is not installed."""
    try:
        module = importlib.import_module(name)
    except Exception as error:  # ImportError, or a broken install
        note = (f"skipped {name}: cannot import it ({type(error).__name__}: {error}); "
                f"install with: .bench-venv/bin/pip install {PEERS.get(name, name)} "
                f"(or run `make bench`)")
        if note not in _notes:
            _notes.append(note)
            print("note: " + note, file=sys.stderr)
        return None
    if name == "jax":
        module.config.update("jax_enable_x64", True)   # float64 where the problem is float64
        module.config.update("jax_platforms", "cpu")
    return module


def notes():
    return list(_notes)


def versions():
    """Versions of numpy and of each peer that imports."""
    out = {"python": platform.python_version(), "numpy": np.__version__,
           "threads": THREADS, "cpus": sorted(os.sched_getaffinity(0))
           if hasattr(os, "sched_getaffinity") else None}
    import teachgrad
    out["teachgrad"] = teachgrad.__version__
    try:
        import threadpoolctl
        out["blas"] = "; ".join(
            f"{p.get('internal_api')} {p.get('version') or ''} ({p.get('num_threads')} threads"
            + (f", {p['architecture']})" if p.get("architecture") else ")")
            for p in threadpoolctl.threadpool_info())
    except ImportError:
        out["blas"] = None
    for name in PEERS:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


# -- timing ---------------------------------------------------------------------------
def interleaved(fns, warmup, repeats, budget_s=None, seed=0, lead_in=1):
    """Seconds per call for each of ``fns`` ({name: callable}), calls interleaved.

    Each function is called ``warmup`` times first. Then each repeat calls every
    function once, in an order shuffled per repeat; with ``lead_in=1`` each timed
    call follows one untimed call of the same function. That keeps what the previous
    library left behind out of the time: a call of JAX right after numpy or a short
    pause was measured here at 14-20 ms instead of 1.5 ms (its runtime threads wake
    slowly), and a thread pool still spinning or cold caches cost the next library
    too; a training loop, calling one library back to back, pays none of it.
    With ``budget_s``, stops early (after at least 5 repeats) once the calls have
    taken that long.
    """
    for _ in range(warmup):
        for f in fns.values():
            f()
    names = list(fns)
    rng = random.Random(seed)
    times = {name: [] for name in names}
    gc.collect()
    clock = time.perf_counter
    start = clock()
    for r in range(repeats):
        rng.shuffle(names)
        for name in names:
            f = fns[name]
            for _ in range(lead_in):
                f()
            t0 = clock()
            f()
            times[name].append(clock() - t0)
        if budget_s is not None and r >= 4 and clock() - start > budget_s:
            break
    return times


def median_ratio(times, name, reference):
    """Median over repeats of ``times[name][r] / times[reference][r]``."""
    return statistics.median(a / b for a, b in zip(times[name], times[reference]))


def median_ms(samples):
    return statistics.median(samples) * 1e3


def checked(calls, want, what, rtol, atol_scale):
    """``{name: fn}`` from ``calls`` (``{name: (fn, host)}``), after checking each
    ``host(fn())`` against ``want`` (``check_close``; ``what`` names the result)."""
    for name, (fn, host) in calls.items():
        check_close(f"{name} {what}", host(fn()), want, rtol, atol_scale)
    return {name: fn for name, (fn, _) in calls.items()}


def against(times, names, reference):
    """``{name: {"ms", "min_ms", "ratio"}}`` for each of ``names``: the median and the
    minimum in ms, and the median per-repeat ratio to ``reference``; each printed."""
    rows = {}
    for name in names:
        row = rows[name] = {"ms": median_ms(times[name]), "min_ms": min(times[name]) * 1e3,
                            "ratio": median_ratio(times, name, reference)}
        print(f"  {name:15s} median {row['ms']:9.3f} ms, min {row['min_ms']:9.3f} ms, "
              f"{row['ratio']:6.2f}x {reference}")
    return rows


# -- command line and results -----------------------------------------------------------
def parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true",
                   help="a few repeats only: a smoke test whose numbers mean little")
    p.add_argument("--json", metavar="PATH", help="also write the results to PATH as JSON")
    return p


def write(args, result):
    """Print nothing more; write ``result`` (plus notes and versions) where --json says."""
    result = dict(result, notes=notes(), versions=versions(),
                  load=os.getloadavg() if hasattr(os, "getloadavg") else None)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return result


def check_close(name, got, want, rtol, atol_scale):
    """Raise unless ``got`` matches ``want`` (numpy arrays, or lists of them).

    ``atol_scale`` is relative to the largest |entry| of each reference array.
    """
    gots = got if isinstance(got, (list, tuple)) else [got]
    wants = want if isinstance(want, (list, tuple)) else [want]
    if len(gots) != len(wants):
        raise AssertionError(f"{name}: {len(gots)} results, expected {len(wants)}")
    for i, (g, w) in enumerate(zip(gots, wants)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            raise AssertionError(f"{name}: result {i} has shape {g.shape}, numpy's {w.shape}")
        scale = float(np.max(np.abs(w))) if w.size else 1.0
        if not np.allclose(g, w, rtol=rtol, atol=atol_scale * (scale or 1.0)):
            err = float(np.max(np.abs(g.astype(np.float64) - w)))
            raise AssertionError(f"{name}: result {i} differs from numpy's: max |diff| {err:.3g}, "
                                 f"max |numpy| {scale:.3g} (rtol {rtol})")
