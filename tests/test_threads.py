"""Recording state belongs to a thread, as TensorFlow's context does.

Each scenario below runs one kind of recording (a tape, a tg.function, a graph being
built, a forward accumulator, a vectorized map, a tg.debug check) on numbers of its
own. A test runs two or more scenarios in threads at once, held together by a barrier
while each is inside its recording block, with a tiny switch interval so that the
threads interleave op by op; each thread's numbers must be those of a run alone.
"""
import itertools
import sys
import threading

import numpy as np
import pytest

import teachgrad as tg
from teachgrad.state import current

STEPS = 40   # ops per scenario: enough for the threads to interleave many times


def chain(x, seed):
    """A short chain of ops whose numbers depend on ``seed``."""
    for i in range(STEPS):
        x = tg.sin(x) * (1.0 + 0.01 * seed) + 0.001 * i
    return x


def tape_gradient(seed, sync):
    x = tg.constant(0.1 * seed)
    with tg.GradientTape() as tape:
        tape.watch(x)
        sync()
        y = chain(x, seed)
    return [float(y), float(tape.gradient(y, x))]


@tg.function
def traced_chain(x):
    """Shared by the threads: their shapes differ, so they trace it at the same time."""
    return tg.sum(chain(x, 2))


def function_call(seed, sync):
    x = tg.constant(np.linspace(0.0, 1.0, seed))   # one shape per seed: one trace each
    sync()
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = traced_chain(x)
    return [float(y), *np.asarray(tape.gradient(y, x)).tolist()]


def graph_building(seed, sync):
    graph = tg.Graph()
    with graph.as_default():
        x = tg.placeholder("float64", [])
        sync()
        y = chain(x, seed)
        dx = tg.gradients(y, x)[0]
    assert isinstance(y, tg.SymbolicTensor)
    return [float(v) for v in tg.Session(graph).run([y, dx], {x: 0.1 * seed})]


def forward_accumulator(seed, sync):
    x = tg.constant(0.1 * seed)
    with tg.ForwardAccumulator(x, tg.constant(1.0)) as acc:
        sync()
        y = chain(x, seed)
    return [float(y), float(acc.jvp(y))]


def vectorized(seed, sync):
    def per_example(x):
        sync()
        return chain(x, seed)
    xs = tg.constant(np.linspace(0.0, 1.0, 5) + seed)
    return np.asarray(tg.vmap(per_example)(xs)).tolist()


def numerics_check(seed, sync):
    """A tg.debug check in this thread sees this thread's NaN, and no other's."""
    with tg.debug.check_numerics():
        sync()
        fine = chain(tg.constant(0.1 * seed), seed)
        with pytest.raises(tg.debug.NumericsError):
            tg.log(tg.constant(-1.0 - seed))
    return [float(fine)]


def unchecked_nan(seed, sync):
    """Makes a NaN on purpose: a check entered in another thread must not see it."""
    x = tg.constant(-1.0 - seed)
    sync()
    with np.errstate(invalid="ignore"):
        values = [float(tg.log(x * (1.0 + 0.01 * i))) for i in range(STEPS)]
    return [int(np.isnan(values).sum())]


SCENARIOS = {
    "tape": tape_gradient,
    "function": function_call,
    "graph": graph_building,
    "accumulator": forward_accumulator,
    "vmap": vectorized,
    "check": numerics_check,
    "nan": unchecked_nan,
}


def alone(name, seed):
    return SCENARIOS[name](seed, lambda: None)


def together(names):
    """Run the scenarios ``names`` at once, one thread each (seeds 3, 4, ...), and return
    each one's numbers (or the exception it raised)."""
    barrier = threading.Barrier(len(names))
    results = [None] * len(names)

    def run(index, name):
        waited = []

        def sync():   # the first call only: vmap may call the function more than once
            if not waited:
                waited.append(True)
                barrier.wait(timeout=30)
        try:
            results[index] = SCENARIOS[name](3 + index, sync)
        except BaseException as error:   # reported by the main thread
            results[index] = error
            barrier.abort()

    threads = [threading.Thread(target=run, args=(i, n)) for i, n in enumerate(names)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    finally:
        sys.setswitchinterval(interval)
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
    return results


def check_together(names):
    results = together(names)
    errors = [(i, r) for i, r in enumerate(results) if isinstance(r, BaseException)]
    # The thread that failed first, not those it left waiting at the barrier:
    errors.sort(key=lambda e: isinstance(e[1], threading.BrokenBarrierError))
    for index, error in errors[:1]:
        raise AssertionError(f"{names[index]} (thread {index}) raised") from error
    for index, (name, result) in enumerate(zip(names, results)):
        np.testing.assert_allclose(result, alone(name, 3 + index), rtol=1e-12,
                                   err_msg=f"{name} in thread {index}")


PAIRS = list(itertools.combinations_with_replacement(sorted(SCENARIOS), 2))


@pytest.mark.parametrize("names", PAIRS, ids=["+".join(p) for p in PAIRS])
def test_two_threads_each_see_their_own_ops(names):
    check_together(names)


def test_every_scenario_at_once():
    check_together(sorted(SCENARIOS) * 2)


def test_another_threads_default_graph_leaves_this_thread_eager():
    graph, entered, done = tg.Graph(), threading.Event(), threading.Event()

    def hold_default():
        with graph.as_default():
            entered.set()
            done.wait(timeout=30)
    thread = threading.Thread(target=hold_default)
    thread.start()
    try:
        assert entered.wait(timeout=30)
        y = tg.constant(2.0) * 3.0
        assert type(y) is tg.Tensor and float(y) == 6.0
    finally:
        done.set()
        thread.join(timeout=30)
    assert all(n.op.name != "multiply" for n in graph.nodes)


def test_another_threads_open_tape_records_nothing_here():
    entered, done, held = threading.Event(), threading.Event(), []

    def hold_tape():
        x = tg.constant(2.0)
        with tg.GradientTape(persistent=True) as tape:
            tape.watch(x)
            held.extend([tape, x])
            entered.set()
            done.wait(timeout=30)
    thread = threading.Thread(target=hold_tape)
    thread.start()
    try:
        assert entered.wait(timeout=30)
        tape, x = held
        y = x * x   # this thread's op, on the watched x: the tape must not see it
    finally:
        done.set()
        thread.join(timeout=30)
    assert tape.gradient(y, x) is None


def test_a_new_thread_starts_with_nothing_recording():
    seen = []
    with tg.GradientTape():
        thread = threading.Thread(target=lambda: seen.append(current().recorders))
        thread.start()
        thread.join(timeout=30)
        assert current().recorders
    assert seen == [()]
