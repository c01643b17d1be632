import os

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _quiet_numpy():
    # NaN/inf tests produce numpy RuntimeWarnings on purpose.
    with np.errstate(all="ignore"):
        yield


#: The array libraries that tests taking the ``backend`` fixture run on.
BACKENDS = ("numpy", "cupy")


@pytest.fixture(params=BACKENDS)
def backend(request):
    """Run the test on each backend in turn (inside ``tg.backend.using(name)``).

    A backend that cannot be used here (CuPy not installed, or no GPU) skips the
    test with teachgrad's own message, which names what to install. ``make test-gpu``
    runs these tests on a machine with an NVIDIA GPU.
    """
    from teachgrad.backend import using

    try:
        with using(request.param):   # can it be used here at all?
            pass
    except RuntimeError as error:
        pytest.skip(f"backend {request.param!r} is not available here: {error}")
    with using(request.param):
        yield request.param


#: ``TEACHGRAD_TEST_BACKEND=cupy pytest tests/test_op_gradients.py`` runs whole test files
#: with that backend in use (``make test-gpu`` does, for the op table's property tests).
#: Unset, tests run on numpy, the default backend, as everywhere else.
TEST_BACKEND = os.environ.get("TEACHGRAD_TEST_BACKEND")


@pytest.fixture(autouse=True)
def _whole_test_backend():
    if not TEST_BACKEND:
        yield
        return
    from teachgrad.backend import using

    with using(TEST_BACKEND):
        yield
