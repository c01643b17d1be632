"""tg.exercises: a student's VJP/JVP rule gets right, or what exactly is wrong."""
import numpy as np
import pytest

import teachgrad as tg
from teachgrad import exercises as ex
from teachgrad.ops.shape.reshape import unbroadcast

POINT = [0.3, 1.2, -2.0]


def test_a_right_rule():
    feedback = ex.check_vjp(tg.sin, lambda g, ans, x: g * tg.cos(x), POINT)
    assert feedback and feedback.verdict == "right"
    assert str(feedback).startswith("Right!")
    assert "&#10004;" in feedback._repr_html_()
    feedback.assert_right()


def test_wrong_at_which_entry():
    feedback = ex.check_vjp(tg.sin, lambda g, ans, x: g * tg.sin(x), POINT)
    assert not feedback and feedback.verdict == "wrong_value"
    assert feedback.input_index == 0 and feedback.entry == (0,)
    assert feedback.got == pytest.approx(feedback.expected * np.tan(0.3))
    with pytest.raises(AssertionError, match="wrong at input entry"):
        feedback.assert_right()


def test_wrong_only_at_one_entry_is_pointed_at():
    def rule(g, ans, x):   # right except where x is negative
        return g * tg.where(x > 0, tg.cos(x), 0.0)
    feedback = ex.check_vjp(tg.sin, rule, POINT)
    assert feedback.verdict == "wrong_value" and feedback.entry == (2,)
    assert "1 of 3 entries differ" in feedback.message


def test_hints_for_common_slips():
    flipped = ex.check_vjp(tg.sin, lambda g, ans, x: -g * tg.cos(x), POINT)
    assert "sign is flipped" in flipped.message
    no_g = ex.check_vjp(tg.sin, lambda g, ans, x: tg.cos(x), POINT)
    assert "multiply by g" in no_g.message
    doubled = ex.check_vjp(tg.exp, lambda g, ans, x: 2 * g * ans, [0.5, -1.0])
    assert "factor of 2" in doubled.message


def test_wrong_shape_explains_the_broadcasting():
    multiply = ex.get("multiply")       # x (3, 1) times y (4,)
    feedback = multiply.check_vjp(lambda g, ans, x, y: unbroadcast(g * y, x),
                                  lambda g, ans, x, y: g * x)
    assert feedback.verdict == "wrong_shape" and feedback.input_index == 1
    assert "shape (3, 4)" in feedback.message and "shape (4,)" in feedback.message
    assert "used 3 times" in feedback.message and "sum g over axis 0" in feedback.message
    x_side = multiply.check_vjp(lambda g, ans, x, y: g * y, lambda g, ans, x, y: g)
    assert x_side.input_index == 0 and "keepdims=True" in x_side.message
    right = multiply.check_vjp(lambda g, ans, x, y: tg.sum(g * y, axis=1, keepdims=True),
                               lambda g, ans, x, y: tg.sum(g * x, axis=0))
    assert right.verdict == "right"


def test_not_differentiable_again_when_written_with_numpy():
    with_numpy = ex.check_vjp(tg.sin, lambda g, ans, x: g * np.cos(x), POINT)
    assert with_numpy.verdict == "not_differentiable_again"
    assert "tg.cos, not np.cos" in with_numpy.message
    raw_array = ex.check_vjp(tg.sin, lambda g, ans, x: np.asarray(g) * np.cos(x), POINT)
    assert raw_array.verdict == "not_differentiable_again"
    assert "numpy array" in raw_array.message
    g_detached = ex.check_vjp(tg.sin, lambda g, ans, x: tg.constant(g.numpy()) * tg.cos(x),
                              POINT)
    assert g_detached.verdict == "not_differentiable_again" and "with g" in g_detached.message


def test_an_op_with_no_gradient_rule_is_named_not_raised():
    # A new op, without a VJP rule yet: the student is writing it.
    my_exp_p = tg.ops.primitive("my_exp", np.exp)

    def my_exp(x):
        return tg.ops.bind(my_exp_p, x)

    through_ans = ex.check_vjp(my_exp, lambda g, ans, x: g * ans, POINT)
    assert through_ans.verdict == "no_gradient_rule" and not through_ans
    assert "f computes with my_exp" in through_ans.message
    assert "tg.ops.defvjp" in through_ans.message
    in_the_rule = ex.check_vjp(tg.exp, lambda g, ans, x: g * my_exp(x), POINT)
    assert in_the_rule.verdict == "no_gradient_rule"
    assert "it uses my_exp, an op with no gradient rule" in in_the_rule.message
    jvp = ex.check_jvp(my_exp, lambda x_dot, ans, x: x_dot * ans, POINT)
    assert jvp.verdict == "no_gradient_rule" and "Give my_exp a VJP rule" in jvp.message
    assert ex.check_vjp(my_exp, lambda g, ans, x: g * tg.exp(x), POINT).ok


def test_a_rule_that_raises_or_miscounts():
    raised = ex.check_vjp(tg.sin, lambda g, ans, x: g.no_such_thing, POINT)
    assert raised.verdict == "raised" and "AttributeError" in raised.message
    count = ex.check_vjp(tg.multiply, lambda g, ans, x, y: g * y, [[1.0, 2.0], [3.0, 4.0]])
    assert count.verdict == "wrong_count" and "2 rules" in count.message


def test_none_where_there_is_a_gradient():
    feedback = ex.check_vjp(tg.multiply, [lambda g, ans, x, y: g * y, lambda g, ans, x, y: None],
                            [[1.0, 2.0], [3.0, 4.0]])
    assert feedback.verdict == "returned_none" and feedback.input_index == 1
    only_x = ex.check_vjp(lambda x, y: x * 2.0 + 0 * y,
                          [lambda g, ans, x, y: 2 * g, None], [[1.0, 2.0], [3.0, 4.0]])
    assert only_x.verdict == "right"


def test_jvp_rules():
    assert ex.check_jvp(tg.exp, lambda x_dot, ans, x: x_dot * ans, [0.5, 1.0]).ok
    no_tangent = ex.check_jvp(tg.exp, lambda x_dot, ans, x: ans, [0.5, 1.0])
    assert no_tangent.verdict == "wrong_value" and "multiply by x_dot" in no_tangent.message
    multiply = ex.get("multiply")
    unbroadcast_tangent = multiply.check_jvp(lambda t, ans, x, y: t * y,
                                             lambda t, ans, x, y: t)
    assert unbroadcast_tangent.verdict == "wrong_shape"
    assert "tg.broadcast_to" in unbroadcast_tangent.message
    assert multiply.check_jvp(lambda t, ans, x, y: t * y, lambda t, ans, x, y: x * t).ok
    numpy_jvp = ex.check_jvp(tg.sin, lambda t, ans, x: t * np.cos(x), POINT)
    assert numpy_jvp.verdict == "not_differentiable_again"


RIGHT_VJPS = {
    "sin": [lambda g, ans, x: g * tg.cos(x)],
    "exp": [lambda g, ans, x: g * ans],
    "log": [lambda g, ans, x: g / x],
    "tanh": [lambda g, ans, x: g * (1 - ans * ans)],
    "sigmoid": [lambda g, ans, x: g * ans * (1 - ans)],
    "multiply": [lambda g, ans, x, y: unbroadcast(g * y, x),
                 lambda g, ans, x, y: unbroadcast(g * x, y)],
    "divide": [lambda g, ans, x, y: unbroadcast(g / y, x),
               lambda g, ans, x, y: unbroadcast(-g * ans / y, y)],
    "matmul": [lambda g, ans, a, b: g @ tg.transpose(b),
               lambda g, ans, a, b: tg.transpose(a) @ g],
    "sum_rows": [lambda g, ans, x: tg.broadcast_to(tg.expand_dims(g, 1), x.shape)],
    "conv2d": [lambda g, ans, x, w: tg.nn.conv2d(
                   tg.pad(g, [(0, 0), (w.shape[0] - 1,) * 2, (w.shape[1] - 1,) * 2, (0, 0)]),
                   tg.transpose(tg.flip(w, (0, 1)), (0, 1, 3, 2)), 1, "VALID"),
               lambda g, ans, x, w: tg.transpose(tg.nn.conv2d(
                   tg.transpose(x, (3, 1, 2, 0)), tg.transpose(g, (1, 2, 0, 3)), 1, "VALID"),
                   (1, 2, 0, 3))],
}


RIGHT_JVPS = {
    "sin_jvp": [lambda t, ans, x: t * tg.cos(x)],
    "multiply_jvp": [lambda t, ans, x, y: tg.broadcast_to(t, ans.shape) * y,
                     lambda t, ans, x, y: x * tg.broadcast_to(t, ans.shape)],
}


@pytest.mark.parametrize("name", ex.names())
def test_every_catalogue_exercise_can_be_solved(name):
    exercise = ex.get(name)
    right = {**RIGHT_VJPS, **RIGHT_JVPS}[name]
    assert exercise.check(*right).ok
    wrong = [lambda *args, rule=rule: 1.5 * rule(*args) for rule in right]
    feedback = exercise.check(*wrong)
    assert feedback.verdict == "wrong_value" and feedback.message.endswith(exercise.hint)


def test_conv2d_exercise_names_the_filters_rules_common_slips():
    """Lesson 11's exercise 2: a filters' cotangent left in the convolution's layout, or
    turned like the input's, is named (a walk-through found numbers only)."""
    right = RIGHT_VJPS["conv2d"][1]
    untransposed = lambda g, ans, x, w: tg.transpose(right(g, ans, x, w), (2, 0, 1, 3))  # noqa: E731
    turned = lambda g, ans, x, w: tg.flip(right(g, ans, x, w), (0, 1))  # noqa: E731
    exercise = ex.get("conv2d")
    assert "put it back in w's layout" in exercise.check(None, untransposed).message
    assert "only the input's rule turns the filters" in exercise.check(None, turned).message
    assert exercise.check(None, right).ok


def test_task_texts_do_not_give_the_answer():
    for exercise in ex.list():
        assert exercise.task.startswith("Write") and "=" not in exercise.task.split(" of ")[0]
        assert not any(word in exercise.task for word in ("cos", "1/x", "ans", "transpose"))
        assert repr(exercise).startswith(f"<exercise {exercise.name}: Write")


def test_a_course_registers_its_own_exercise():
    cube_p = tg.ops.primitive("course_cube", lambda x: x ** 3)

    def cube(x):
        return tg.ops.bind(cube_p, x)

    exercise = ex.register(name="course_cube", f=cube, inputs=([1.0, -2.0],),
                           task="Write the VJP rule of cube.", hint="the power rule.")
    try:
        assert ex.get("course_cube") is exercise and exercise in ex.list()
        assert exercise.check(lambda g, ans, x: g * 3 * x ** 2).ok
        assert "Hint: the power rule." in exercise.check(lambda g, ans, x: g * x ** 2).message
        with pytest.raises(ValueError, match="already an exercise called 'course_cube'"):
            ex.register(exercise)
        ex.register(exercise, replace_existing=True)
        with pytest.raises(ValueError, match="kind is one of"):
            ex.register(name="bad", f=cube, inputs=([1.0],), task="Write it.", kind="hvp")
    finally:
        ex.unregister("course_cube")
    assert "course_cube" not in ex.names()


def test_unknown_exercise():
    with pytest.raises(ValueError, match="No exercise called 'cosh'"):
        ex.get("cosh")


def test_a_matrix_input_is_one_input():
    rule = lambda g, ans, x: tg.broadcast_to(tg.expand_dims(g, 1), x.shape)   # noqa: E731
    assert ex.check_vjp(lambda x: tg.sum(x, axis=1), rule, [[1.0, 2.0], [3.0, 4.0]]).ok
    assert ex.check_vjp(tg.sum, lambda g, ans, x: tg.broadcast_to(g, x.shape),
                        [[1.0, 2.0], [3.0, 4.0]]).ok


# -- check cells: answer() and check_prediction() ---------------------------------------

def test_answer_says_what_is_missing():
    with pytest.raises(ex.NotYet, match="`not_written` is not defined yet"):
        ex.answer("not_written")
    empty = None   # noqa: F841 (looked up by name)
    with pytest.raises(ex.NotYet, match="`empty` is still empty"):
        ex.answer("empty")
    value = {"p": 3}   # noqa: F841
    assert ex.answer("value") == {"p": 3}


def test_answer_turns_a_stub_into_a_message():
    def stub(x):
        raise NotImplementedError()

    def broken(x):
        return x.nope

    with pytest.raises(ex.NotYet, match="`stub` is not written yet"):
        ex.answer("stub")(1.0)
    with pytest.raises(ex.NotYet, match="`broken` raised AttributeError"):
        ex.answer("broken")(1.0)
    def stub_rule(g, ans, x):
        raise NotImplementedError()

    feedback = ex.check_vjp(tg.sin, stub_rule, POINT)
    assert feedback.verdict == "raised" and "not written yet" in feedback.message
    with pytest.raises(ex.NotYet, match="not written yet"):
        feedback.assert_right()


def test_check_prediction_points_at_the_wrong_part_without_the_answer():
    actual = {"p": 3, "q": 1, "t": 0}
    assert ex.check_prediction({"p": 3, "q": 1, "t": 0}, actual, about="the counts")
    with pytest.raises(ex.NotYet) as wrong:
        ex.check_prediction({"p": 2, "q": 1, "t": 0}, actual, about="the counts",
                            hint="count the uses", hints={"p": "p has several consumers"})
    message = str(wrong.value)
    assert "'p', 2, is off (too low)" in message and "p has several consumers" in message
    assert "Hint: count the uses" in message and "3" not in message
    with pytest.raises(ex.NotYet, match="no entry for 'q'"):
        ex.check_prediction({"p": 3}, actual, about="the counts")
    with pytest.raises(ex.NotYet, match="'x' does not belong in it"):
        ex.check_prediction({"x", "term"}, {"term"}, about="the saved values")
    with pytest.raises(ex.NotYet, match="1 member is missing"):
        ex.check_prediction(set(), {"term"}, about="the saved values")
    with pytest.raises(ex.NotYet, match="you said 7 \\(too high\\)"):
        ex.check_prediction(7, 5, about="the number of adds")
    with pytest.raises(ex.NotYet, match="give a tuple of 2 values"):
        ex.check_prediction(5, (5, 1), about="the passes")


def test_check_value_shows_the_right_value_and_the_hint():
    assert ex.check_value(2.0, 2.0, about="replay(...)")
    with pytest.raises(ex.NotYet, match=r"replay\(\.\.\.\) came out as 2, but should be 3\. "
                                        r"Hint: add every contribution"):
        ex.check_value(2.0, 3.0, about="replay(...)", hint="add every contribution")
    with pytest.raises(ex.NotYet, match=r"has shape \(2,\), but should have shape \(3,\)"):
        ex.check_value([1.0, 2.0], [1.0, 2.0, 3.0], about="the gradient")


# -- hints for the usual slips -------------------------------------------------------------

def test_a_kink_accepts_any_subgradient_and_is_not_blamed_on_numpy():
    at_zero = [-1.0, 0.0, 2.0]
    assert ex.check_vjp(tg.abs, lambda g, ans, x: g * tg.sign(x), at_zero).ok
    for step in (lambda x: x > 0, lambda x: x >= 0):      # relu'(0) may be 0 or 1
        rule = lambda g, ans, x, step=step: g * tg.cast(step(x), x.dtype)  # noqa: E731
        assert ex.check_vjp(tg.relu, rule, at_zero).ok
    outside = ex.check_vjp(tg.relu, lambda g, ans, x: 2 * g * tg.cast(x >= 0, x.dtype), at_zero)
    assert outside.verdict == "wrong_value" and outside.entry == (1,)
    assert "kink" in outside.message and "subgradient" in outside.message


def test_hints_for_sin_where_cos_belongs_and_for_a_forgotten_ans():
    itself = ex.check_vjp(tg.sin, lambda g, ans, x: g * tg.sin(x), POINT)
    assert "sin where cos belongs" in itself.message
    forgot = ex.check_vjp(tg.sin, lambda g, x: g * tg.cos(x), POINT)
    assert forgot.verdict == "raised" and "Did you leave it out?" in forgot.message
    assert "rule(g, ans, *inputs)" in forgot.message


def test_hints_for_a_reduction_and_a_product():
    sum_rows = ex.get("sum_rows")
    for rule in (lambda g, ans, x: g, lambda g, ans, x: g * tg.ones_like(x)):
        feedback = sum_rows.check_vjp(rule)
        assert "tg.expand_dims(g, 1)" in feedback.message, feedback.message
    kept = sum_rows.check_vjp(lambda g, ans, x: tg.expand_dims(g, 1))
    assert kept.verdict == "wrong_shape" and "tg.broadcast_to" in kept.message
    matmul = ex.get("matmul")
    no_transpose = matmul.check_vjp(lambda g, ans, a, b: g @ b, lambda g, ans, a, b: g)
    assert no_transpose.verdict == "raised" and "tg.transpose" in no_transpose.message
    swapped = matmul.check_vjp(lambda g, ans, a, b: g @ tg.transpose(b),
                               lambda g, ans, a, b: tg.transpose(g) @ a)
    assert swapped.verdict == "wrong_shape" and "B^T A^T" in swapped.message


# -- check_backward: the student's own engine ----------------------------------------------

def _loop_counts(target, producer):
    import collections
    pending, seen, stack = collections.Counter(), set(), [producer(target)]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        pending.setdefault(node, 0)
        for x in node.inputs:
            if producer(x) is not None:
                pending[producer(x)] += 1
                stack.append(producer(x))
    return pending


def _queue_backward(target, sources, producer, count=_loop_counts, reporting=False,
                    lifo=False, overwrite=False):
    """A right engine: pending counts, then a FIFO queue (``count`` may replace the walk;
    ``reporting`` uses tg.exercises' Pending and Queue; ``lifo`` pops from the back;
    ``overwrite``, a wrong one, keeps only a tensor's last cotangent instead of adding)."""
    import collections
    pending = count(target, producer)
    if reporting:
        pending = ex.Pending(pending)
    grads = {target.id: [tg.ones_like(target)]}
    queue = (ex.Queue if reporting else collections.deque)([producer(target)])
    while queue:
        node = queue.pop() if lifo else queue.popleft()
        outs = [sum(grads.pop(t.id)) if t.id in grads else None for t in node.outputs]
        for x, g in zip(node.inputs, ex.call_rule(node, outs)):
            if g is not None and overwrite:
                grads[x.id] = [g]
            elif g is not None:
                grads.setdefault(x.id, []).append(g)
            if producer(x) is not None:
                pending[producer(x)] -= 1
                if pending[producer(x)] == 0:
                    queue.append(producer(x))
    return [sum(grads[s.id]) if s.id in grads else None for s in sources]


def _recursive_counts(target, producer):
    import collections
    pending = collections.Counter()

    def visit(node):
        if node in pending:
            return
        pending[node] = 0
        for x in node.inputs:
            if producer(x) is not None:
                visit(producer(x))
                pending[producer(x)] += 1
    visit(producer(target))
    return pending


def test_check_backward_accepts_a_queue_and_says_what_is_wrong_otherwise():
    right = ex.check_backward(_queue_backward)
    assert right.ok and "10,000-deep chain" in right.message

    def eager(target, sources, producer):     # runs a rule at every contribution
        grads, queue = {}, [(target, tg.ones_like(target))]
        while queue:
            t, g = queue.pop()
            if any(t is s for s in sources):
                grads[t.id] = grads.get(t.id, 0) + g
            if producer(t) is not None:
                queue += [(x, gx) for x, gx in zip(producer(t).inputs,
                                                   ex.call_rule(producer(t), [g]))
                          if gx is not None]
        return [grads.get(s.id) for s in sources]
    twice = ex.check_backward(eager)
    assert not twice and "ran the rule of multiply (n0) three times" in twice.message
    assert "n0 = multiply(x0, x1)" in twice.message and twice.recorded is not None

    deep = ex.check_backward(lambda t, s, p: _queue_backward(t, s, p, _recursive_counts))
    assert "RecursionError" in deep.message and "10,000 sin" in deep.message

    zeros = ex.check_backward(lambda t, s, p: [g if g is not None else tg.zeros_like(x)
                                               for g, x in zip(_queue_backward(t, s, p), s)])
    assert "should be None, not zeros" in zeros.message
    assert "not written yet" in ex.check_backward(_stub_backward).message
    assert "one gradient per source" in ex.check_backward(lambda t, s, p: None).message


def _stub_backward(target, sources, producer):
    raise NotImplementedError()


def test_record_and_call_rule_are_the_engines_protocol():
    run = ex.record(lambda x, y: tg.sin(x * y), 0.5, 2.0)
    assert [run.label(n) for n in run.nodes()] == ["multiply (n0)", "sin (n1)"]
    node = run.producer(run.target)
    (g_xy,) = ex.call_rule(node, [tg.constant(1.0)])
    assert np.isclose(float(g_xy), np.cos(1.0))
    with ex.watching_rules() as calls:
        ex.call_rule(node, [tg.constant(1.0)])
    assert calls[0][0] is node
    with pytest.raises(ValueError, match="one cotangent for each"):
        ex.call_rule(node, [])


def test_check_loss_reads_the_curve():
    assert ex.check_loss([2.3, 0.8, 0.05], below=0.1)
    with pytest.raises(ex.NotYet, match="blew up.*smaller learning rate"):
        ex.check_loss([2.3, 40.0, float("nan")], below=0.1)
    with pytest.raises(ex.NotYet, match="rose from 2.3 to 3.*go against the gradient"):
        ex.check_loss([2.3, 2.9, 3.0], below=0.1)
    with pytest.raises(ex.NotYet, match="not below 0.1.*a larger learning rate, or more epochs"):
        ex.check_loss([2.3, 1.9, 1.7], below=0.1)


def _reporting_backward(target, sources, producer, lifo=False):
    return _queue_backward(target, sources, producer, reporting=True, lifo=lifo)


def test_replay_records_the_students_run_for_a_stepper_beside_the_engines():
    run = ex.record(lambda x, y: tg.sin(x * y) * tg.exp(x * y) + x * y, 0.5, 2.0)
    with tg.viz.record() as rec:
        expected = run.tape.gradient(run.target, run.sources)
    fifo = ex.replay(_reporting_backward, run)
    kinds = [type(e).__name__ for e in fifo.events]
    assert kinds[:3] == ["Start", "Pop", "CallVJP"] and kinds[-1] == "Finish"
    assert np.allclose([float(g) for g in fifo.events[-1].gradients],
                       [float(g) for g in expected])
    assert ex.first_difference(rec.traces[0], fifo, run) is None
    stepper = tg.viz.BackpropStepper(fifo)       # the student's run replays like the engine's
    assert len(stepper.frames) == len(fifo.events)
    lifo = ex.replay(lambda t, s, p: _reporting_backward(t, s, p, lifo=True), run)
    beside = ex.Beside(rec.traces[0], lifo, run)
    assert beside.first is not None and f"your step {beside.first[1]}" in beside.note
    ref_step, your_step = beside.first
    assert type(rec.traces[0].events[ref_step]) is type(lifo.events[your_step])
    assert beside._repr_mimebundle_()["text/plain"].startswith(beside.note)
    with tg.viz.record() as recorded:       # the student's run reaches the same observer
        mine = ex.replay(_reporting_backward, run)
    assert recorded.traces == [mine]
    # outside replay, Pending and Queue are a plain dict and deque
    assert ex.check_backward(_reporting_backward).ok
    assert ex.check_backward(_reporting_backward).beside() is None


def test_a_wrong_engine_is_replayed_beside_the_engine_on_the_failing_graph():
    def skips_a_contribution(target, sources, producer):
        grads = _reporting_backward(target, sources, producer)
        return [None if g is None else 0.5 * g for g in grads]
    feedback = ex.check_backward(skips_a_contribution)
    assert not feedback and "the tape's is" in feedback.message
    beside = feedback.beside()
    assert beside is not None and beside.first is None     # same steps, wrong result
    end = len(beside.reference.frames) - 1
    assert beside.values_part is not None and beside.values_part[0] == end   # at Finish
    assert "take the same steps, but the values part" in beside.note


def test_beside_names_the_first_rule_call_handed_a_wrong_cotangent():
    """An engine that overwrites a tensor's cotangents instead of adding them takes
    the engine's steps; Beside names the first rule call whose values differ."""
    def overwrites(target, sources, producer):
        return _queue_backward(target, sources, producer, reporting=True, overwrite=True)
    def used_three_times(x, y):
        p = x * y
        return tg.sin(p) * tg.exp(p) + p
    run = ex.record(used_three_times, 0.5, 2.0)
    with tg.viz.record() as rec:
        run.tape.gradient(run.target, run.sources)
    beside = ex.Beside(rec.traces[0], ex.replay(overwrites, run), run)
    assert beside.first is None and beside.values_part is not None
    k, j = beside.values_part
    assert type(rec.traces[0].events[k]).__name__ == "CallVJP"
    assert f"teachgrad's step {k} and your step {j}" in beside.note


def test_answer_repeats_what_the_exercise_asks_for():
    with pytest.raises(ex.NotYet, match="The exercise asks for a dict of counts"):
        ex.answer("not_written_either", expect="a dict of counts")

    def stub_rule(g, ans, x):
        raise NotImplementedError()
    rule = ex.answer("stub_rule", expect="the VJP rule of sin")
    feedback = ex.check_vjp(tg.sin, rule, POINT)
    assert "`stub_rule` is not written yet" in feedback.message
    assert "The exercise asks for the VJP rule of sin" in feedback.message
    stub = ex.check_backward(ex.answer("_stub_backward", expect="a backward pass"))
    assert stub.verdict == "raised" and "The exercise asks for a backward pass" in stub.message
    assert "The graph" not in stub.message


def test_a_fetched_function_that_raises_keeps_the_checkers_explanation():
    def forgot_ans(g, x):
        return g * tg.cos(x)
    feedback = ex.check_vjp(tg.sin, ex.answer("forgot_ans"), POINT)
    assert "raised TypeError" in feedback.message and "Did you leave it out?" in feedback.message
    assert "NotYet" not in feedback.message

    def recursive(t, s, p):
        return _queue_backward(t, s, p, _recursive_counts)
    deep = ex.check_backward(ex.answer("recursive"))
    assert "RecursionError" in deep.message and "Walk with a queue" in deep.message


def test_counts_are_compared_exactly():
    with pytest.raises(ex.NotYet, match="too high"):
        ex.check_prediction(205520897, 205520896, about="the flops")
    assert ex.check_prediction(3.0000000001, 3.0, about="a slope")


@pytest.mark.parametrize("name", sorted({**RIGHT_VJPS, **RIGHT_JVPS}))
def test_a_rule_right_at_the_given_point_only_is_not_right(name):
    """A rule that returns what it computed the first time (the right cotangent at the
    exercise's point, ignoring its arguments) fails at the second point the check makes."""
    right = {**RIGHT_VJPS, **RIGHT_JVPS}[name]
    right = right if isinstance(right, (list, tuple)) else [right]

    def once(rule):
        memo = []

        def remembered(*args):
            if not memo:
                memo.append(tg.constant(rule(*args).numpy()))
            return memo[0]
        return remembered
    feedback = ex.get(name).check(*[once(rule) for rule in right])
    assert not feedback and "not at a second one the check chose" in str(feedback), \
        str(feedback)
