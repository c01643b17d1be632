"""tg.print (issue 43): an op whose effect is the line it writes.

Its formatting is tf.print's (the expected strings are TensorFlow's logging_ops tests');
eagerly it writes at once; in a traced function it writes on every call, in program order,
and no optimisation pass removes, folds, merges or fuses it; Python's print runs once, at
trace time. Under a tape it carries no gradient, and a gradient does not print again."""
import sys

import numpy as np
import pytest

import teachgrad as tg


def printed(capsys, fn, *args):
    fn(*args)
    return capsys.readouterr()


# -- what a line looks like (tf.print's strings) -----------------------------------------
@pytest.mark.parametrize("summarize, expected", [
    (None, "[0 1 2 ... 7 8 9]"), (1, "[0 ... 9]"), (2, "[0 1 ... 8 9]"),
    (3, "[0 1 2 ... 7 8 9]"), (-1, "[0 1 2 3 4 5 6 7 8 9]")])
def test_summarize_writes_the_ends_of_a_long_axis(capsys, summarize, expected):
    tg.print(tg.arange(10), summarize=summarize)
    assert capsys.readouterr().err == expected + "\n"


def test_structures_numbers_and_strings_are_written_as_tf_print_writes_them(capsys):
    t = tg.arange(10)
    tg.print("first:", t, "middle:", {"small": tg.constant([0.3, 12.4, -16.1], tg.float32),
                                      "Big": t * 10}, 10, [t * 2, t])
    assert capsys.readouterr().err == (
        "first: [0 1 2 ... 7 8 9] middle: {'Big': [0 10 20 ... 70 80 90], "
        "'small': [0.3 12.4 -16.1]} 10 [[0 2 4 ... 14 16 18], [0 1 2 ... 7 8 9]]\n")
    tg.print(23, [23, 5], {"6": 12})
    tg.print("{}6", {"{}": t * 10})
    tg.print(tg.constant(43.5, tg.float32))
    tg.print(t, t * 10, sep="<separator>", end="<customend>")
    assert capsys.readouterr().err == ("23 [23, 5] {'6': 12}\n{}6 {'{}': [0 10 20 ... 70 80 90]}"
                                       "\n43.5\n[0 1 2 ... 7 8 9]<separator>[0 10 20 ... 70 80 90]"
                                       "<customend>")


def test_a_matrix_is_written_a_row_a_line_and_long_columns_summarized(capsys):
    tg.print(tg.reshape(tg.arange(4), (2, 2)), tg.constant([True, False]))
    tg.print(tg.reshape(tg.arange(14), (7, 2)), summarize=1)
    assert capsys.readouterr().err == "[[0 1]\n [2 3]] [1 0]\n[[0 1]\n ...\n [12 13]]\n"


def test_output_stream_stdout_a_file_an_object_and_a_logging_function(capsys, tmp_path):
    tg.print("out", output_stream=sys.stdout)
    assert capsys.readouterr().out == "out\n"
    path = tmp_path / "log.txt"
    tg.print(tg.arange(3), output_stream=f"file://{path}")
    tg.print(tg.arange(11, 14), output_stream=f"file://{path}")
    assert path.read_text() == "[0 1 2]\n[11 12 13]\n"
    lines = []
    tg.print("to a function", output_stream=lines.append)
    assert lines == ["to a function"]


# -- eagerly, and on every call of a traced function ----------------------------------
def test_python_print_runs_once_at_trace_time_and_tg_print_on_every_call(capsys):
    @tg.function
    def step(x):
        print("traced with", x.shape)
        tg.print("A", x)
        y = x * 2.0
        tg.print("B", y)
        return x + 1.0

    outs = [printed(capsys, step, tg.constant([1.0, 2.0])) for _ in range(3)]
    assert outs[0].out == "traced with (2,)\n"
    assert outs[1].out == outs[2].out == ""
    assert [o.err for o in outs] == ["A [1 2]\nB [2 4]\n"] * 3


def test_prints_run_in_program_order_even_when_no_output_needs_them(capsys):
    @tg.function
    def prints():
        tg.print("A")
        tg.print("B")
        tg.print("C")
        return tg.constant(0.0)

    assert printed(capsys, prints).err == "A\nB\nC\n"
    assert printed(capsys, prints).err == "A\nB\nC\n"


@pytest.mark.parametrize("optimize", [True, False, ("fold",), ("cse",), ("fuse", "reuse")])
def test_no_pass_removes_folds_or_merges_a_print(capsys, optimize):
    @tg.function(optimize=optimize)
    def f(x):
        c = tg.constant(2.0) * 3.0          # foldable: the print of it stays a print
        tg.print(c)
        tg.print(c)                         # equal to the first: both stay
        tg.print(tg.exp(x * 2.0))           # an elementwise chain feeding a print
        return x + 1.0

    for _ in range(2):
        assert printed(capsys, f, tg.constant(0.0)).err == "6\n6\n1\n"
    concrete = f.get_concrete_function(tg.constant(0.0))
    run = concrete.optimized if optimize is not False else concrete
    assert [n.op.name for n in run.graph.nodes].count("print") == 3


def test_a_print_inside_a_loop_body_and_a_branch_runs_each_time(capsys):
    @tg.function
    def f(x):
        def body(i, total):
            tg.print("step", i)
            return i + 1, total + x
        _, total = tg.while_loop(lambda i, total: i < 3, body, [tg.constant(0), x * 0.0])
        return tg.cond(total > 0.0, lambda: (tg.print("positive"), total)[1],
                       lambda: (tg.print("not positive"), -total)[1])

    assert printed(capsys, f, tg.constant(1.0)).err == "step 0\nstep 1\nstep 2\npositive\n"
    assert printed(capsys, f, tg.constant(-1.0)).err == "step 0\nstep 1\nstep 2\nnot positive\n"


def test_under_a_tape_a_print_carries_no_gradient_and_the_gradient_prints_nothing(capsys):
    f = tg.function(lambda x: (tg.print("x", x), x * x)[1])
    x = tg.constant(3.0)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
        tg.print(y)
    assert capsys.readouterr().err == "x 3\n9\n"
    assert tape.gradient(y, x).numpy() == 6.0
    assert capsys.readouterr().err == ""


def test_a_session_prints_when_it_runs_what_depends_on_the_print(capsys):
    graph = tg.Graph()
    with graph.as_default():
        x = tg.placeholder(tg.float32, (2,), name="x")
        token = tg.print("x:", x, name="show_x")
        y = x * 2.0
    assert token.node.name == "show_x" and token.dtype == np.bool_
    session = tg.Session(graph)
    session.run(y, {x: [1.0, 2.0]})
    assert capsys.readouterr().err == ""                  # TF1's rule: only what is fetched
    session.run([y, token], {x: [1.0, 2.0]})
    assert capsys.readouterr().err == "x: [1 2]\n"


def test_inside_vectorized_map_one_line_holds_the_batch(capsys):
    tg.vectorized_map(lambda row: (tg.print(row), row * 2.0)[1], tg.ones((2, 3)))
    assert capsys.readouterr().err == "[[1 1 1]\n [1 1 1]]\n"


@pytest.mark.parametrize("kwargs, error, says", [
    ({"output_stream": "unknown"}, ValueError, "output_stream"),
    ({"output_stream": 3}, TypeError, "output_stream"),
    ({"summarize": 0}, ValueError, "summarize"),
    ({"summarize": 1.5}, TypeError, "summarize"),
    ({"sep": 1}, TypeError, "sep"),
    ({"end": None}, TypeError, "end"),
])
def test_bad_arguments_are_refused_by_name(kwargs, error, says):
    with pytest.raises(error, match=says):
        tg.print(tg.arange(3), **kwargs)
