"""Run every peer benchmark and print one table: teachgrad against its peers.

    make bench                                   # sets up .bench-venv, then runs this
    .bench-venv/bin/python benchmarks/peers/run.py [--quick] [--only mlp_medium,jvp]
                                                 [--markdown PATH] [--json PATH]

Each workload runs in its own process (the scalar chain: one process per
library), writes its results as JSON, and this script gathers them into one
table of times and ratios, with teachgrad's goals and whether they are met.
A peer that is not installed is skipped with a note; ``--quick`` is a smoke test.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = ("scalar_chain", "mlp_medium", "mlp_large", "jvp", "hvp", "per_example", "jacobian",
             "batch_hessian", "cnn", "gpu_mlp")
COLUMNS = ("teachgrad", "teachgrad tg.function", "micrograd", "torch", "jax jit", "jax",
           "autograd")


def run_workload(name, quick, threads):
    """Run ``benchmarks/peers/<name>.py`` in a fresh process; its JSON results."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        cmd = [sys.executable, os.path.join(HERE, name + ".py"), "--json", out]
        if quick:
            cmd.append("--quick")
        print(f"== {name} ==", flush=True)
        start = time.perf_counter()
        env = dict(os.environ, TEACHGRAD_BENCH_THREADS=str(threads))
        proc = subprocess.run(cmd, env=env)
        if proc.returncode != 0:
            print(f"{name} failed (exit {proc.returncode}); left out of the table", flush=True)
            return None
        print(f"   ({time.perf_counter() - start:.0f} s)", flush=True)
        with open(out) as f:
            return json.load(f)


def merge_runs(runs):
    """One result from several runs of a workload: each number is the median over the
    runs, and ``ranges`` keeps its (min, max) for the table."""
    runs = [r for r in runs if r is not None]
    if not runs:
        return None
    merged = dict(runs[-1], rows={}, ranges={}, runs=len(runs),
                  loads=[r["load"][0] for r in runs if r.get("load")])
    for name in runs[-1]["rows"]:
        row, ranges = {}, {}
        for field, value in runs[-1]["rows"][name].items():
            values = [r["rows"][name][field] for r in runs if name in r["rows"]]
            if isinstance(value, (int, float)):
                row[field] = statistics.median(values)
                ranges[field] = (min(values), max(values))
            else:
                row[field] = value
        merged["rows"][name], merged["ranges"][name] = row, ranges
    return merged


# -- the table -----------------------------------------------------------------------------
def _fmt(value, unit, spread=None):
    if value is None:
        return ""
    if unit == "us":
        text = f"{value:.1f} µs" if value < 100 else f"{value:.0f} µs"
    else:
        text = f"{value:.2f}x" if value < 10 else f"{value:.1f}x"
    if spread and spread[0] != spread[1]:
        digits = 2 if unit == "x" and spread[1] < 10 else (1 if spread[1] < 100 else 0)
        text += f" ({spread[0]:.{digits}f}-{spread[1]:.{digits}f})"
    return text


def _cell(result, name, field, unit):
    """The table text for ``result["rows"][name][field]``, with its range over runs."""
    value = result["rows"].get(name, {}).get(field)
    spread = result.get("ranges", {}).get(name, {}).get(field)
    return _fmt(value, unit, spread)


#: The suffix of the MLP rows that use a library's fused cross-entropy op.
FUSED = ", fused loss"


def table_rows(results):
    """(workload, {column: text}, goal text, verdict) for each row of the table."""
    rows = []

    def verdict(value, goal, below=True):
        if value is None:
            return "not measured"
        return "met" if (value <= goal if below else value >= goal) else "MISSED"

    r = results.get("scalar_chain")
    if r and r["rows"]:
        cells = {k: _cell(r, k, "us_per_op", "us") for k in r["rows"] if k != "numpy"}
        tg_value = r["rows"].get("teachgrad", {}).get("us_per_op")
        rows.append(("scalar chain, 2,000 ops, fwd + bwd, µs/op, own process each",
                     cells, "<= 5 µs", verdict(tg_value, 5.0)))
        micrograd = r["rows"].get("micrograd", {}).get("us_per_op")
        if tg_value and micrograd:   # the goal of the unboxed backward pass (issue 21)
            ratio = tg_value / micrograd
            met = "met" if ratio <= 1.0 else "met at worst" if ratio <= 1.5 else "MISSED"
            rows.append(("  teachgrad's µs/op / micrograd's (same run)",
                         {"teachgrad": f"{ratio:.2f}x"}, "<= 1.0 (1.5 at worst)", met))
        cycles = {k: str(v["cycle_objects"]) for k, v in r["rows"].items() if k != "numpy"}
        rows.append(("  objects left to the cycle collector by one chain", cycles, "0",
                     verdict(r["rows"].get("teachgrad", {}).get("cycle_objects"), 0)))
    for key, title, goals in (
            ("mlp_medium", "MLP 784-256-256-10, batch 64, float64: gradient / numpy",
             {"teachgrad": 1.10, "teachgrad tg.function": 1.03}),   # issue 21's
            ("mlp_large", "MLP 784-2048-2048-10, batch 1024, float32: gradient / numpy",
             {"teachgrad": 1.05, "teachgrad tg.function": 0.85})):
        r = results.get(key)
        if not r:
            continue
        cells = {k: _cell(r, k, "ratio", "x") for k in r["rows"]
                 if k != "numpy" and not k.endswith(FUSED)}
        goal = "; ".join(f"{'eager' if k == 'teachgrad' else 'tg.function'} <= {g}"
                         for k, g in goals.items())
        met = "; ".join(verdict(r["rows"].get(k, {}).get("ratio"), g) for k, g in goals.items())
        rows.append((title, cells, goal, met))
        fused = {k[:-len(FUSED)]: _cell(r, k, "ratio", "x") for k in r["rows"]
                 if k.endswith(FUSED)}
        if fused:
            rows.append(("  the same, with each library's fused cross-entropy op", fused,
                         "(no goal)", ""))
    r = results.get("jvp")
    if r:
        for direction, goal in (("params", 2.0), ("input", None)):
            cells = {k: _cell(r, k, f"{direction}_ratio", "x") for k in r["rows"]}
            tg_value = r["rows"].get("teachgrad", {}).get(f"{direction}_ratio")
            what = "every parameter" if direction == "params" else "the input batch"
            rows.append((f"JVP of the medium MLP loss / its forward (direction: {what})",
                         cells, f"<= {goal}" if goal else "(no goal)",
                         verdict(tg_value, goal) if goal else ""))
    r = results.get("hvp")
    if r:
        cells = {k: _cell(r, k, "ratio", "x") for k in r["rows"]}
        rows.append(("HVP of the medium MLP loss / its gradient", cells, "eager <= 2.0",
                     verdict(r["rows"].get("teachgrad", {}).get("ratio"), 2.0)))
        traced = r["rows"].get("teachgrad tg.function", {}).get("vs_jax_jit")
        if traced is not None:   # issue 44's goal
            rows.append(("  teachgrad tg.function's HVP / jax jit's (ms over ms)",
                         {"teachgrad tg.function": f"{traced:.2f}x"}, "<= 1.0",
                         verdict(traced, 1.0)))
    r = results.get("per_example")
    if r:
        rows += per_example_rows(r, verdict)
    r = results.get("jacobian")
    if r:
        cells = {k: _cell(r, k, "ratio", "x") for k in r["rows"] if k in COLUMNS}
        rows.append(("Jacobian of tanh(W x + b), 256 -> 256, float64: vmap of VJP (peers: "
                     "jacrev) / analytic numpy", cells, "(no goal)", ""))
        rows.append(("  teachgrad: vmap of the VJP / a loop of 256 VJPs",
                     {"teachgrad": _cell(r, "teachgrad", "vs_loop", "x")}, "(no goal)", ""))
        traced = r["rows"].get("teachgrad tg.function", {}).get("vs_jax_jit")
        if traced is not None:   # issue 44's goal
            rows.append(("  teachgrad tg.function(jacrev) / jax.jit(jacrev) (ms over ms)",
                         {"teachgrad tg.function": f"{traced:.2f}x"}, "<= 1.2",
                         verdict(traced, 1.2)))
    r = results.get("batch_hessian")
    if r:
        rows.append(("teachgrad: LSTM cell batch Hessian, nested batch_jacobian / its loop",
                     {"teachgrad": _cell(r, "teachgrad", "vs_loop", "x")}, "(no goal)", ""))
    r = results.get("cnn")
    if r and r["rows"]:
        for workload, title, goals in (
                ("step", "lesson 11's CNN training step (batch 32, Adam) / PyTorch's",
                 {"teachgrad": 1.3, "teachgrad tg.function": 1.1}),
                ("conv2d", "conv2d 3x3 SAME, (32, 32, 32, 16) -> 32, fwd + bwd / PyTorch's",
                 {"teachgrad": 1.5}),
                ("conv2d float64", "the same conv2d in float64 / PyTorch's",
                 {"teachgrad": 0.8})):
            names = [k.split(": ", 1)[1] for k in r["rows"] if k.startswith(workload + ": ")]
            cells = {n: _cell(r, f"{workload}: {n}", "vs_torch", "x") for n in names}
            goal = "; ".join(f"{'eager' if k == 'teachgrad' else 'tg.function'} <= {g}"
                             for k, g in goals.items()) or "(no goal)"
            met = "; ".join(verdict(r["rows"].get(f"{workload}: {k}", {}).get("vs_torch"), g)
                            for k, g in goals.items())
            rows.append((title, cells, goal, met))
    r = results.get("gpu_mlp")
    if r:
        if r["rows"]:
            cells = {"teachgrad": _cell(r, "teachgrad cupy", "speedup", "x"),
                     "teachgrad tg.function": _cell(r, "teachgrad cupy tg.function", "speedup",
                                                    "x")}
            floor = r["rows"].get("cupy by hand", {}).get("speedup")
            rows.append(("GPU: large MLP gradient, CuPy speed-up over numpy"
                         + (f" (CuPy by hand: {floor:.1f}x)" if floor else ""), cells,
                         ">= 20x", verdict(r["rows"].get("teachgrad cupy", {}).get("speedup"),
                                           20.0, below=False)))
        else:
            rows.append(("GPU: large MLP gradient, CuPy speed-up over numpy", {},
                         ">= 20x", "not measured (no GPU here)"))
    return rows


def per_example_rows(r, verdict):
    """The rows of ``per_example.py``: each library's vmap of grad over numpy's
    per-example gradients by hand, then teachgrad's against its goals (issue 28)."""
    cells = {k: _cell(r, k, "ratio", "x") for k in r["rows"] if k in COLUMNS}
    tg_row = r["rows"].get("teachgrad", {})
    floor = r["rows"].get("numpy", {}).get("vs_batch")

    def teachgrad(field):
        return {"teachgrad": _cell(r, "teachgrad", field, "x")}
    return [
        ("per-example gradients, medium MLP, 64 examples: vmap of grad / numpy by hand",
         cells, "(no goal)", ""),
        ("  teachgrad: vmap of grad / its batch gradient"
         + (f" (numpy by hand: {floor:.1f}x)" if floor else ""), teachgrad("vs_batch"),
         "<= 1.5", verdict(tg_row.get("vs_batch"), 1.5)),
        ("  teachgrad: vmap of grad / jax.vmap(jax.grad), not jitted", teachgrad("vs_jax"),
         "<= 1.3", verdict(tg_row.get("vs_jax"), 1.3)),
        ("  teachgrad: vmap of grad / a loop of 64 gradients", teachgrad("vs_loop"),
         "(no goal)", ""),
    ]


def render(rows, markdown=False):
    header = ["workload"] + list(COLUMNS) + ["goal (teachgrad)", "verdict"]
    body = [[title] + [cells.get(c, "") for c in COLUMNS] + [goal, met]
            for title, cells, goal, met in rows]
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(cell.strip() or "–" for cell in row) + " |" for row in body]
        return "\n".join(lines)
    widths = [max(len(row[i]) for row in [header] + body) for i in range(len(header))]
    fmt = lambda row: "  ".join(c.ljust(w) for c, w in zip(row, widths))  # noqa: E731
    return "\n".join([fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in body])


def environment(results):
    versions = next((r["versions"] for r in results.values() if r), {})
    threads = versions.get("threads")
    lines = [f"{datetime.date.today().isoformat()}, {platform.machine()}, "
             f"{os.cpu_count()} logical cores, python {platform.python_version()}; "
             + (f"each library limited to {threads} thread(s), pinned to CPU(s) "
                f"{versions.get('cpus')}" if threads else "libraries' default threads"),
             ", ".join(f"{k} {v}" for k, v in versions.items()
                       if k not in ("python", "threads", "cpus", "blas") and v)]
    blas = versions.get("blas")
    if blas:
        lines.append("thread pools (threadpoolctl, in the workloads): " + blas)
    env = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
                                      "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS") if k in os.environ}
    lines.append("env: " + (", ".join(f"{k}={v}" for k, v in env.items()) or
                            "no OPENBLAS_*/OMP_* variables set"))
    loads = [x for r in results.values() if r for x in r.get("loads", [])]
    if loads:
        lines.append(f"load average (1 min) after each workload run: "
                     + ", ".join(f"{x:.1f}" for x in loads) + f" ({os.cpu_count()} cores)")
    return lines


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a smoke test: a few repeats each")
    p.add_argument("--threads", type=int, default=1, metavar="N",
                   help="CPU threads per library, the process pinned to N cores (default 1: "
                        "see common.py); 0 leaves each library's own default")
    p.add_argument("--runs", type=int, default=1, metavar="N",
                   help="run every workload N times (in turn); the table shows the median "
                        "over runs and, in brackets, the range")
    p.add_argument("--only", help="comma-separated workloads, from: " + ", ".join(WORKLOADS))
    p.add_argument("--markdown", metavar="PATH", help="also write the table as Markdown")
    p.add_argument("--json", metavar="PATH", help="also write every result as JSON")
    args = p.parse_args(argv)
    names = args.only.split(",") if args.only else list(WORKLOADS)
    unknown = set(names) - set(WORKLOADS)
    if unknown:
        p.error(f"unknown workloads: {', '.join(sorted(unknown))}")

    start = time.perf_counter()
    runs = {name: [] for name in names}
    for _ in range(args.runs):
        for name in names:
            runs[name].append(run_workload(name, args.quick, args.threads))
    results = {name: merge_runs(done) for name, done in runs.items()}
    rows = table_rows(results)
    notes = sorted({n for r in results.values() if r for n in r.get("notes", [])})
    print()
    print("teachgrad and its peers: times relative to each row's reference (medians of "
          "per-repeat ratios" + (f"; median over {args.runs} runs, range in brackets)"
                                 if args.runs > 1 else ", one run)") + (" -- QUICK RUN, numbers mean little"
                                                      if args.quick else ""))
    print(render(rows))
    for line in environment(results):
        print(line)
    for note in notes:
        print("note: " + note)
    failed = [n for n, r in results.items() if r is None]
    if failed:
        print("failed workloads (see above): " + ", ".join(failed))
    print(f"total {time.perf_counter() - start:.0f} s")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(render(rows, markdown=True) + "\n\n" + "\n".join(
                "* " + line for line in environment(results) + notes) + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
