#!/usr/bin/env bash
# Opens the course in JupyterLab (make lab). Prints the URL to open first, because on a
# machine with no browser (a container, a cloud machine over ssh) that URL is all you need.
#
#   PORT      the first port to try (default 8888); the next free one is used if it is taken
#   LAB_ARGS  more JupyterLab options, e.g. LAB_ARGS="--ip=0.0.0.0" to reach a container
#             from outside it
#
# JupyterLab refuses to start as root unless told --allow-root, so that is passed only
# when we are root. The token comes from JUPYTER_TOKEN (made up here unless you set it),
# so it never appears in the process list.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}

port=$("$VENV/bin/python" - "${PORT:-8888}" <<'PY'
import socket, sys
start = int(sys.argv[1])
for port in range(start, start + 50):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
        print(port)
        break
else:
    sys.exit(f"no free port between {start} and {start + 49}; try PORT=<another>")
PY
)
export JUPYTER_TOKEN=${JUPYTER_TOKEN:-$("$VENV/bin/python" -c 'import secrets; print(secrets.token_hex(24))')}

args=(--port="$port" --ServerApp.port_retries=0)
if [ "$(id -u)" = "0" ]; then
    args+=(--allow-root)
fi

url="http://127.0.0.1:$port/lab?token=$JUPYTER_TOKEN"
cat <<MSG

  The course opens at:

      $url

  (Ctrl-C twice stops JupyterLab.)

MSG
# shellcheck disable=SC2086  # LAB_ARGS is a list of options
exec "$VENV/bin/jupyter" lab "${args[@]}" ${LAB_ARGS:-} notebooks/
