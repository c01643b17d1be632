#!/usr/bin/env bash
# Installs Debian's Chromium for the browser test (tests/browser/) when it is
# missing: with apt-get when we are root on a Debian-like machine, otherwise by
# telling the user how. Playwright drives this binary; it never downloads a
# browser of its own (PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1).
set -euo pipefail
CHROMIUM="${TEACHGRAD_CHROMIUM:-/usr/bin/chromium}"
[ -x "$CHROMIUM" ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Chromium (for the browser test) with apt-get ..."
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    exit 0
fi
cat >&2 <<'MSG'
The browser test (tests/browser/) drives Chromium, which is not installed.
Install it, then run this command again:
    Debian/Ubuntu:  sudo apt-get install chromium
or point TEACHGRAD_CHROMIUM at a Chromium or Chrome binary; or skip the browser
test with: .venv/bin/python -m pytest -m "not browser"
MSG
exit 1
