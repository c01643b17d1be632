# The two commands a newcomer needs:
#   make lab   set up .venv and open the course in JupyterLab
#   make test  set up .venv and run every test (unit, property, notebooks)
VENV    := .venv
PYTHON  := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
EXTRAS  ?= lab,test

.PHONY: lab test setup graphviz chromium bench clean

setup: $(STAMP) graphviz

# Re-install only when the project's dependencies change.
$(STAMP): pyproject.toml
	@test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $(PYTHON) -m pip install --quiet -e ".[$(EXTRAS)]"
	@touch $(STAMP)

# graphviz's `dot` program draws the diagrams; the Python package only wraps it.
graphviz:
	@command -v dot >/dev/null 2>&1 || bash scripts/install-graphviz.sh

# The browser test drives Debian's Chromium (Playwright never downloads one).
chromium:
	@bash scripts/install-chromium.sh

lab: setup
	$(VENV)/bin/jupyter lab notebooks/

test: setup chromium
	TEACHGRAD_REQUIRE_BROWSER=1 $(PYTHON) -m pytest

bench: setup
	$(PYTHON) benchmarks/mlp_gradient.py
	$(PYTHON) benchmarks/forward_mode.py
	$(PYTHON) benchmarks/recompute_grad.py
	$(PYTHON) benchmarks/while_loop.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
