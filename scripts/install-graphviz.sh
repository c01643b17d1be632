#!/usr/bin/env bash
# Installs Graphviz's `dot` program when it is missing: with apt-get when we are
# root on a Debian-like machine, otherwise by telling the user how.
set -euo pipefail
command -v dot >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Graphviz (the 'dot' program) with apt-get ..."
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null
    exit 0
fi
cat >&2 <<'MSG'
teachgrad draws graphs with Graphviz's `dot` program, which is not installed.
Install it, then run this command again:
    Debian/Ubuntu:  sudo apt-get install graphviz
    macOS:          brew install graphviz
    conda:          conda install -c conda-forge graphviz
MSG
exit 1
