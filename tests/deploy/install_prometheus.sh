#!/usr/bin/env bash
# The monitoring tests (tests/deploy/test_prometheus.py) check the alert rules with
# `promtool test rules` and run every dashboard query against a real Prometheus,
# started by the test on a loopback port. This installs Debian's `prometheus` package
# (the server and promtool) when either is missing, with apt-get (through sudo when
# not root), and says so. The package's own service is not wanted: it is stopped and
# disabled where systemd runs. PAIGOW_PROMETHEUS_BIN names another folder holding
# prometheus and promtool, and skips it.
set -euo pipefail

if [ -n "${PAIGOW_PROMETHEUS_BIN:-}" ]; then
    exit 0
fi
if command -v prometheus >/dev/null && command -v promtool >/dev/null; then
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "tests/deploy: needs Prometheus and promtool (Debian: prometheus); install them or set PAIGOW_PROMETHEUS_BIN" >&2
    exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
echo "make test: installing the Debian package for the monitoring tests: prometheus"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# policy-rc.d refuses to start the package's service during the install (no daemon
# listening on :9090 behind the tests' back); removed afterwards.
policy=/usr/sbin/policy-rc.d
made_policy=""
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
    $sudo chmod +x "$policy"
    made_policy=1
fi
$sudo apt-get install -y -qq --no-install-recommends prometheus >/dev/null
if [ -n "$made_policy" ]; then
    $sudo rm -f "$policy"
fi
if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
    $sudo systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
echo "make test: installed prometheus"
