"""The backend module: host memory settings."""
import os
import platform
import subprocess
import sys

import pytest

from teachgrad.backend import host_memory

glibc = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not glibc, reason="the malloc settings apply to Linux with glibc only")
def test_freed_host_memory_is_kept_on_glibc():
    assert host_memory.active
    assert host_memory.keep_freed_memory()   # applying it again changes nothing


def test_malloc_defaults_can_be_kept():
    code = "import teachgrad.backend.host_memory as h; print(h.active)"
    env = dict(os.environ, TEACHGRAD_MALLOC_DEFAULTS="1")
    out = subprocess.run([sys.executable, "-c", "import teachgrad; " + code], env=env,
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
