"""Fixtures for the class test: a real JupyterHub with its Node proxy.

``make test`` installs the proxy (scripts/install-hub-proxy.sh) and JupyterHub (the
``test`` extra) and sets TEACHGRAD_REQUIRE_HUB=1, so there a missing piece is an error.
Run by hand without them, the test is skipped and says how to get them.
"""
import os
from pathlib import Path

import pytest
from hubserver import PROXY, VENV_BIN, Hub


def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.hub)


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """A JupyterHub on 127.0.0.1, stopped (servers, kernels, proxy and all) at the end."""
    missing = [str(p) for p in (PROXY, VENV_BIN / "jupyterhub") if not p.exists()]
    if missing:
        message = (f"missing {', '.join(missing)}; run `make test-hub` (or `make test`), "
                   f"which installs JupyterHub and its proxy")
        if os.environ.get("TEACHGRAD_REQUIRE_HUB") == "1":
            pytest.fail(message)
        pytest.skip(message)
    server = Hub(tmp_path_factory.mktemp("jupyterhub")).start()
    try:
        yield server
    finally:
        server.stop()
        assert server.process.poll() is not None, "JupyterHub is still running"
