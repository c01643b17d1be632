"""teachgrad where no process can be started and there is no SIGALRM, as in Pyodide
(JupyterLite) (issue 38, part 6).

Pyodide is simulated: ``subprocess.Popen`` raises ``OSError(ENOSYS)`` (what starting
a process raises there; graphviz starts ``dot`` through it), and ``signal`` loses
``alarm``, ``setitimer`` and ``SIGALRM``. Drawings and steppers then use the layout
made in Python, and the exercises' time budget still stops an answer that never
returns, with the same message.
"""
import base64
import errno
import re
import signal
import subprocess
import threading
import time

import pytest

import teachgrad as tg
from teachgrad import exercises as ex
from teachgrad.exercises import guard
from teachgrad.viz import wasm


def _no_processes(error):
    def popen(*args, **kwargs):
        raise error
    return popen


def pyodide(monkeypatch):
    """Simulate Pyodide for the rest of the test (short time limits too)."""
    monkeypatch.setattr(subprocess, "Popen",
                        _no_processes(OSError(errno.ENOSYS, "Function not implemented")))
    for name in ("alarm", "setitimer", "getitimer", "SIGALRM", "ITIMER_REAL"):
        if hasattr(signal, name):
            monkeypatch.delattr(signal, name)
    monkeypatch.setattr(guard, "LIMITS", guard.Limits(rule=0.3, again=1.0, answer=0.3,
                                                      engine=0.3, deep=1.0))


@pytest.fixture(name="pyodide")
def pyodide_fixture(monkeypatch):
    pyodide(monkeypatch)


def a_trace():
    """A backward pass through three ops: y = exp(sin(x)) * x."""
    x = tg.Variable(0.5, name="x")
    with tg.viz.record() as rec:
        with tg.GradientTape() as tape:
            y = tg.multiply(tg.exp(tg.sin(x, name="s"), name="e"), x, name="y")
        tape.gradient(y, x)
    return rec.traces[0]


def test_the_simulation_is_pyodides(pyodide):
    with pytest.raises(OSError) as raised:
        subprocess.run(["true"])
    assert raised.value.errno == errno.ENOSYS
    assert not hasattr(signal, "SIGALRM") and not hasattr(signal, "alarm")


@pytest.mark.parametrize("error", [OSError(errno.ENOSYS, "Function not implemented"),
                                   PermissionError(errno.EACCES, "Permission denied"),
                                   FileNotFoundError(errno.ENOENT, "No such file")],
                         ids=["ENOSYS", "EACCES", "ENOENT"])
def test_draw_falls_back_to_the_python_layout_whatever_stops_dot(error, monkeypatch):
    monkeypatch.setattr(subprocess, "Popen", _no_processes(error))
    drawing = tg.viz.draw(a_trace())
    bundle = drawing._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"}
    html = bundle["text/html"]
    assert wasm.LAID_OUT_HERE in html and "Viz.js" not in html
    svg = pictured(html)
    names = set(drawing.node_names.values()) | set(drawing.tensor_names.values())
    assert all(f"<title>{name}</title>" in svg for name in names)
    assert pictured(drawing.html()) == svg and wasm.svg(drawing)[1] is False


def pictured(html):
    """The SVG of the one ``<img>`` in ``html``."""
    (data,) = re.findall(r'<img [^>]*src="data:image/svg\+xml;base64,([^"]+)"', html)
    return base64.b64decode(data).decode("utf-8")


def test_a_dot_that_fails_on_the_graph_is_still_an_error(monkeypatch, tmp_path):
    """Only a dot that cannot be started falls back; one that ran and failed says why."""
    dot = tmp_path / "dot"
    dot.write_text("#!/bin/sh\necho 'Error: syntax error in line 1' >&2\nexit 1\n")
    dot.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(subprocess.CalledProcessError):
        wasm.svg(tg.viz.draw(a_trace()))


def test_the_steppers_draw_without_processes(pyodide):
    stepper = tg.viz.BackpropStepper(a_trace())
    svg = stepper.graph_html("tg-test")
    assert "tg-node tg-node-" in svg and "laid this graph out itself" in stepper.header_html()
    assert "tg-node-" in stepper.widget.tg_parts["graph"].value
    x, x_dot = tg.constant([1.0, 2.0]), tg.constant([1.0, 0.5])
    with tg.viz.record() as rec:
        with tg.transposition_only(), tg.ForwardAccumulator(x, x_dot):
            tg.sum(tg.tanh(x) * x)
    jvp = tg.viz.JVPStepper(rec)
    assert jvp.graph_html("tg-test").count("<svg") == 4 and "laid this graph out itself" in jvp.header_html()


def _spins(g, ans, x):
    while True:
        try:
            time.sleep(0.001)
        except Exception:       # noqa: BLE001 -- a student's catch-all must not help
            pass


def spins_forever(x):
    while True:
        pass


def test_a_rule_that_never_returns_is_told_the_same_without_sigalrm(monkeypatch):
    monkeypatch.setattr(guard, "LIMITS", guard.Limits(rule=0.3))
    with_alarm = ex.check_vjp(tg.sin, _spins, [0.3, 1.2])
    pyodide(monkeypatch)
    start = time.monotonic()
    without = ex.check_vjp(tg.sin, _spins, [0.3, 1.2])
    assert time.monotonic() - start < 5
    assert without.verdict == with_alarm.verdict == "stopped"
    assert without.message == with_alarm.message and "more than 0.3 seconds" in without.message
    assert ex.check_vjp(tg.sin, lambda g, ans, x: g * tg.cos(x), [0.3, 1.2])


def test_an_answer_that_never_returns_is_stopped_without_sigalrm(pyodide):
    fetched = ex.answer("spins_forever")
    with pytest.raises(ex.NotYet, match=r"`spins_forever` ran for more than 0.3 seconds"):
        fetched(1.0)


def test_a_rule_that_never_returns_is_stopped_in_another_thread(monkeypatch):
    """SIGALRM reaches only the main thread: elsewhere the traced clock stops the rule."""
    monkeypatch.setattr(guard, "LIMITS", guard.Limits(rule=0.3))
    said = []
    worker = threading.Thread(target=lambda: said.append(ex.check_vjp(tg.sin, _spins, [0.3])))
    worker.start()
    worker.join(30)
    assert said and said[0].verdict == "stopped"


def test_nested_traced_limits_stop_at_the_earliest_and_restore_the_tracer(pyodide):
    import sys
    before = sys.gettrace()
    with pytest.raises(guard.Stopped, match="the inner block ran for more than 0.2"):
        with guard.time_limit(5.0, "the outer block"):
            with guard.time_limit(0.2, "the inner block"):
                while True:
                    pass
    with pytest.raises(guard.Stopped, match="the outer block ran for more than 0.2"):
        with guard.time_limit(0.2, "the outer block"):
            with guard.time_limit(5.0, "the inner block"):
                _spins(None, None, None)
    assert sys.gettrace() is before
