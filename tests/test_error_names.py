"""Errors are named for the function called (issue 41, item 11): ``tg.hessian`` is
``tg.jacfwd(tg.grad(f))`` and ``tg.value_and_grad`` shares ``tg.grad``'s checks, but a
student who called one of them reads its name, not the inner transformation's."""
import pytest

import teachgrad as tg


def _cube_sum(x):
    return tg.sum(x ** 3)


# (what is wrong, the call); each is tried through every transformation below
WRONG_CALLS = {
    "a string argument": lambda t: t(_cube_sum)("a"),
    "None as argument": lambda t: t(_cube_sum)(None),
    "an integer argument": lambda t: t(_cube_sum)(tg.constant([1])),
    "argnums a string": lambda t: t(_cube_sum, argnums="a")(tg.constant([1.0])),
    "argnums out of range": lambda t: t(_cube_sum, argnums=3)(tg.constant([1.0])),
    "a vector output": lambda t: t(lambda x: x ** 3)(tg.constant([1.0, 2.0])),
    "an integer output": lambda t: t(lambda x: tg.constant(1))(tg.constant([1.0])),
}
TRANSFORMS = {"tg.hessian": tg.hessian, "tg.grad": tg.grad,
              "tg.value_and_grad": tg.value_and_grad}


@pytest.mark.parametrize("called", list(TRANSFORMS))
@pytest.mark.parametrize("wrong", list(WRONG_CALLS))
def test_errors_name_the_function_called(wrong, called):
    with pytest.raises((TypeError, ValueError)) as info:
        WRONG_CALLS[wrong](TRANSFORMS[called])
    message = str(info.value)
    assert message.startswith(called + ":") or message.startswith(called + " "), message
    others = [name for name in ("tg.jacfwd", "tg.grad", "tg.value_and_grad")
              if name != called and not called.startswith(name)]
    assert not any(name in message.split(" use ")[0] for name in others), message


def test_an_error_inside_f_keeps_its_own_name():
    """f itself calls tg.grad wrongly: that message is f's, and stays as it was."""
    def f(x):
        return tg.grad(lambda y: y)(tg.constant([1.0, 2.0]))

    with pytest.raises(TypeError, match="^tg.grad requires a function with a scalar"):
        tg.hessian(f)(tg.constant(1.0))


def test_hessian_still_computes():
    h = tg.hessian(_cube_sum)(tg.constant([1.0, 2.0]))
    assert h.numpy().tolist() == [[6.0, 0.0], [0.0, 12.0]]
