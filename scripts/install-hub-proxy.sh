#!/usr/bin/env bash
# Installs JupyterHub's proxy, configurable-http-proxy (a Node program from npm), into
# .hub-proxy/ for the class test (tests/hub/). Node and npm come from Debian's packages:
# installed with apt-get when missing and we are root on a Debian-like machine, otherwise
# the script says how to get them.
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX=.hub-proxy
PROXY="$PREFIX/node_modules/.bin/configurable-http-proxy"
[ -x "$PROXY" ] && exit 0
if ! command -v npm >/dev/null 2>&1; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
        echo "Installing Node.js and npm (for JupyterHub's proxy) with apt-get ..."
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
    else
        cat >&2 <<'MSG'
The class test (tests/hub/) runs JupyterHub, whose proxy is a Node program; npm is missing.
Install Node.js and npm (Debian/Ubuntu: sudo apt-get install nodejs npm), then run this
command again; or skip the test with: .venv/bin/python -m pytest -m "not hub"
MSG
        exit 1
    fi
fi
echo "Installing configurable-http-proxy (JupyterHub's proxy) into $PREFIX/ ..."
mkdir -p "$PREFIX"
npm install --silent --no-audit --no-fund --prefix "$PREFIX" configurable-http-proxy@5 >/dev/null
test -x "$PROXY"
