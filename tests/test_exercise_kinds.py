"""What a lesson answer is, made sure of through its contract (teachgrad/exercises/kinds.py):
a check cell's ``answer(name)`` says in a sentence what the answer is instead."""
import math

import numpy as np
import pytest

import teachgrad as tg
from teachgrad.exercises.contracts import Contract
from teachgrad.exercises.kinds import as_contract_says, made_sure


def _contract(kind="value", returns="number", words=()):
    return Contract("x_answer", lesson=99, number=1, kind=kind, cell="c",
                    expect="a number", returns=returns, words=words)


@pytest.mark.parametrize("value, said", [
    (None, "is None"), ("6.75", "a number in quotes is a string"), ([6.75], "list"),
    (True, "bool"), (math.nan, "nan"), (tg.constant([1.0, 2.0]), "not a number")])
def test_a_value_that_is_not_a_number_is_said_in_words(value, said):
    with pytest.raises(tg.exercises.NotYet, match="Not yet") as raised:
        made_sure(value, _contract(), "`x_answer`")
    assert said in str(raised.value)


def test_numbers_of_every_kind_are_numbers():
    for value in [3, 2.5, np.float64(1.0), np.array(2.0), tg.constant(4.0)]:
        made_sure(value, _contract(), "`x_answer`")


def test_a_prediction_of_other_words_names_the_words_allowed():
    contract = _contract("prediction", "set", words=("k", "term"))
    made_sure({"term"}, contract, "`x_answer`")
    with pytest.raises(tg.exercises.NotYet, match='write "k" or "term"'):
        made_sure({"terms"}, contract, "`x_answer`")
    with pytest.raises(tg.exercises.NotYet, match="not a set"):
        made_sure(3, contract, "`x_answer`")


def test_a_function_answer_is_watched_and_what_it_returns_made_sure_of():
    contract = _contract("function", "tensor")
    with pytest.raises(tg.exercises.NotYet, match="not a function"):
        as_contract_says(contract, 3.0, {})
    with pytest.raises(tg.exercises.NotYet, match="is None"):
        as_contract_says(contract, lambda x: None, {})(tg.constant(1.0))

    def halves(x):
        x.numpy()[...] *= 0.5
        return x * 1.0
    x = tg.constant(np.ones(3))
    with pytest.raises(tg.exercises.NotYet, match="changed its input `x` in place"):
        as_contract_says(contract, halves, {})(x)
    assert np.array_equal(x.numpy(), np.ones(3))        # put back
    assert float(as_contract_says(contract, lambda x: x * 2.0, {})(tg.constant(1.5))) == 3.0


def test_a_contract_with_an_unknown_kind_of_result_is_refused():
    with pytest.raises(ValueError, match="returns is one of"):
        made_sure(1.0, _contract(returns="float"), "`x_answer`")


def test_an_input_changed_by_a_function_of_star_args_is_named_by_its_place():
    def halves(*args):
        args[1].numpy()[...] *= 0.5
        return args[1] * 1.0
    with pytest.raises(tg.exercises.NotYet, match="changed its input `argument 1`"):
        as_contract_says(_contract("function", "tensor"), halves, {})(
            tg.constant(1.0), tg.constant(np.ones(2)))
