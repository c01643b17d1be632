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
