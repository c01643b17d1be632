import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _quiet_numpy():
    # NaN/inf tests produce numpy RuntimeWarnings on purpose.
    with np.errstate(all="ignore"):
        yield
