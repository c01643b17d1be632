"""The backend module: host memory settings, numbers as 0-d values."""
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

import teachgrad as tg
from teachgrad import backend

glibc = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"


def _malloc_setting_after_import(**env):
    code = "import teachgrad; import teachgrad.backend.host_memory as h; print(h.active)"
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, **env),
                         capture_output=True, text=True, check=True).stdout
    return out.strip()


def test_importing_teachgrad_leaves_malloc_alone():
    env = {k: v for k, v in os.environ.items() if k != "TEACHGRAD_KEEP_FREED_MEMORY"}
    out = subprocess.run([sys.executable, "-c", "import teachgrad.backend.host_memory as h, "
                          "teachgrad; print(h.active)"], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.skipif(not glibc, reason="the malloc settings apply to Linux with glibc only")
def test_keeping_freed_host_memory_is_opt_in_on_glibc():
    assert _malloc_setting_after_import(TEACHGRAD_KEEP_FREED_MEMORY="1") == "True"
    code = ("import teachgrad as tg; from teachgrad.backend import host_memory as h; "
            "print(tg.backend.keep_freed_memory(), tg.backend.keep_freed_memory(), h.active)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["True", "True", "True"]   # applying it again changes nothing


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_a_number_becomes_a_numpy_scalar_of_the_dtype_on_numpy(dtype):
    value = backend.scalar(2, np.dtype(dtype))
    assert backend.is_numpy_scalar(value) and value.dtype == dtype and value == 2
    assert not backend.is_numpy_scalar(np.asarray(2.0))   # a 0-d array is mutable


def test_a_python_number_next_to_a_tensor_takes_its_dtype_as_a_numpy_scalar():
    x = tg.constant(np.float32(1.5))
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0 + 1
    constant = tape.recorded.producers[y.id].inputs[1]
    assert backend.is_numpy_scalar(constant.value) and constant.dtype == np.float32
    assert y.dtype == np.float32 and y.numpy() == 4.0
    assert tape.gradient(y, x).dtype == np.float32
