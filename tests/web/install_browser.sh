#!/usr/bin/env bash
# The browser tests (tests/web) drive Debian's Chromium, headless, through the Python
# `playwright` package (a dev extra; its own browser download is not used). This
# installs what is missing, with apt-get (through sudo when not root), and says so:
#   chromium           the browser
#   fonts-dejavu-core  a font with the card suits, for readable screenshots
# PAIGOW_CHROMIUM names another Chromium binary and skips the install.
set -euo pipefail

if [ -n "${PAIGOW_CHROMIUM:-}" ]; then
    exit 0
fi
need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
if [ ${#need[@]} -eq 0 ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "tests/web: needs ${need[*]} (Debian packages); install them or set PAIGOW_CHROMIUM" >&2
    exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
echo "make test: installing Debian packages for the browser tests: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
echo "make test: installed ${need[*]}"
