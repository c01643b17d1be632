#!/usr/bin/env bash
# Builds the venv that `make test-oldest` or `make test-newest` runs the core's tests in:
#
#   bash scripts/versions-venv.sh oldest   # .venv-oldest: Python 3.10, the declared floors
#   bash scripts/versions-venv.sh newest   # .venv-newest: Python 3.13, the newest releases
#
# oldest installs with tests/constraints/oldest.txt, which pins numpy, ipywidgets and
# graphviz at the floors pyproject.toml declares (and everything else at the versions
# that were resolved with them, so the floor run does not drift). newest installs with
# tests/constraints/newest.txt (nothing pinned there today), upgrading everything, so it
# meets each new release of numpy, ipywidgets and graphviz.
#
# The interpreter comes from pyenv ($PYENV_ROOT/versions/3.10.*, the newest patch release
# there), else from pythonX.Y on PATH; PYTHON_OLDEST or PYTHON_NEWEST names one by hand.
# When none is found, this says so and fails: CI must not pass without the run.
# Only teachgrad and what the core's tests need (pytest, hypothesis) are installed:
# no JupyterLab, nbgrader or browser tools.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
    oldest) want=3.10; override=${PYTHON_OLDEST:-} ;;
    newest) want=3.13; override=${PYTHON_NEWEST:-} ;;
    *) echo "usage: bash scripts/versions-venv.sh oldest|newest" >&2; exit 2 ;;
esac
VENV=${TEACHGRAD_VERSIONS_VENV:-.venv-$1}   # the tests point it elsewhere
CONSTRAINTS=tests/constraints/$1.txt

find_python() {
    if [ -n "$override" ]; then
        echo "$override"
        return
    fi
    local root=${PYENV_ROOT:-$HOME/.pyenv} candidate
    candidate=$(ls -d "$root"/versions/"$want".*/bin/python 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$candidate" ]; then
        candidate=$(command -v "python$want" || true)
    fi
    echo "$candidate"
}

python=$(find_python)
found=
[ -n "$python" ] && found=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true)
if [ "$found" != "$want" ]; then
    echo "make test-$1 needs Python $want, and none was found (looked for" \
         "${PYENV_ROOT:-$HOME/.pyenv}/versions/$want.*/bin/python and python$want on PATH;" \
         "PYTHON_${1^^}=${override:-unset}${found:+, which is Python $found})." >&2
    echo "Install it (pyenv install $want) or name one with PYTHON_${1^^}=/path/to/python$want." >&2
    exit 1
fi

echo "test-$1: $("$python" --version) ($python) -> $VENV, with $CONSTRAINTS"
rm -rf "$VENV"
"$python" -m venv "$VENV"
py=$VENV/bin/python
"$py" -m pip install --quiet --upgrade pip
upgrade=()
[ "$1" = newest ] && upgrade=(--upgrade --upgrade-strategy eager)
"$py" -m pip install --quiet "${upgrade[@]}" -c "$CONSTRAINTS" -e . pytest hypothesis
"$py" -c "import sys, numpy, ipywidgets, graphviz, pytest, hypothesis
print('test-$1:', 'Python', sys.version.split()[0], '| numpy', numpy.__version__,
      '| ipywidgets', ipywidgets.__version__, '| graphviz', graphviz.__version__,
      '| pytest', pytest.__version__, '| hypothesis', hypothesis.__version__)"
