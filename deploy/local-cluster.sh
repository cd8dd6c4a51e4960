#!/usr/bin/env bash
# The topology of deploy/compose.yaml on this machine, with processes instead of
# containers: one Redis, three paigow-server nodes, and HAProxy (Debian's package,
# installed when missing) in front of them with the configuration of deploy/haproxy.cfg.
#
#   deploy/local-cluster.sh up           start everything; prints the balancer's URL
#   deploy/local-cluster.sh status       the live nodes, and which one holds each table
#   deploy/local-cluster.sh restart N    drain node N (SIGTERM) and start it again: one
#                                        step of a rolling upgrade
#   deploy/local-cluster.sh stop N       drain node N and leave it stopped (scale in)
#   deploy/local-cluster.sh start N      start node N (scale out: any N)
#   deploy/local-cluster.sh down         stop everything (each node drains)
#   deploy/local-cluster.sh install      only install HAProxy if it is missing
#   deploy/local-cluster.sh monitor      start Prometheus (Debian's package) scraping the
#                                        nodes, with deploy/prometheus's rules; `down`
#                                        stops it too
#   deploy/local-cluster.sh prometheus-config
#                                        print the configuration `monitor` gives it
#
# Settings (environment): PAIGOW_CLUSTER_DIR (where the logs, the Redis files and the
# pid files go; default /tmp/paigow-cluster), PAIGOW_CLUSTER_PORT (the balancer's port,
# 8765), PAIGOW_CLUSTER_NODE_PORT (node N listens on this + N - 1; 8801),
# PAIGOW_CLUSTER_NODES (3), PAIGOW_CLUSTER_BIN (the folder of paigow-server; the
# repository's .venv/bin), PAIGOW_CLUSTER_PROMETHEUS_PORT (Prometheus's, 9090),
# PAIGOW_CLUSTER_TLS_CERT (a PEM file holding the certificate, its chain and its key:
# the balancer then speaks TLS, wss:// and https://, and the nodes behind it stay plain;
# PAIGOW_CLUSTER_TLS_CA, the CA the start-up check trusts: by default the system's, or
# the certificate itself when it is self-signed), and any PAIGOW_* setting for the nodes
# (PAIGOW_LEASE_MS, PAIGOW_TABLES_FILE, ...).
set -euo pipefail
# Debian puts haproxy in /usr/sbin, which a user's PATH (or a bare environment's) lacks.
PATH=${PATH:+$PATH:}/usr/sbin:/sbin

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PAIGOW_CLUSTER_DIR:-/tmp/paigow-cluster}
port=${PAIGOW_CLUSTER_PORT:-8765}
node_port=${PAIGOW_CLUSTER_NODE_PORT:-8801}
count=${PAIGOW_CLUSTER_NODES:-3}
bin=${PAIGOW_CLUSTER_BIN:-$root/.venv/bin}
prometheus_port=${PAIGOW_CLUSTER_PROMETHEUS_PORT:-9090}
tls_cert=${PAIGOW_CLUSTER_TLS_CERT:-}
tls_ca=${PAIGOW_CLUSTER_TLS_CA:-}
scheme=http
ws=ws
if [ -n "$tls_cert" ]; then
    scheme=https
    ws=wss
fi
socket=$dir/redis.sock
url=unix://$socket

say() { printf '%s\n' "$*" >&2; }

install() {
    command -v haproxy >/dev/null && return 0
    if [ "$(id -u)" != 0 ]; then
        say "haproxy is missing: install Debian's package (apt-get install haproxy) as root"
        exit 1
    fi
    say "installing haproxy (Debian's package)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends haproxy >/dev/null
}

# Wait up to $1 seconds for the command after it to succeed.
wait_for() {
    local seconds=$1
    shift
    local end=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $end ] || return 1
        sleep 0.1
    done
}

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

http_ok() { "$bin/python" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "$1"; }

# The balancer's /readyz, over TLS when it speaks it: the certificate checked against
# PAIGOW_CLUSTER_TLS_CA, else the system's CAs and the certificate itself (self-signed).
balancer_ok() {
    "$bin/python" -c '
import ssl, sys, urllib.request
context = None
if sys.argv[1].startswith("https:"):
    context = ssl.create_default_context(cafile=sys.argv[2] or None)
    if not sys.argv[2]:
        context.load_verify_locations(cafile=sys.argv[3])
urllib.request.urlopen(sys.argv[1], timeout=2, context=context)
' "$scheme://localhost:$port/readyz" "$tls_ca" "$tls_cert"
}

start_redis() {
    alive "$dir/redis.pid" && return 0
    local redis
    redis=$(command -v redis-server || echo "$bin/redis-server")
    "$redis" --port 0 --unixsocket "$socket" --unixsocketperm 700 --dir "$dir" \
        --appendonly yes --appendfsync everysec --save '' --daemonize yes \
        --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"
    wait_for 10 test -S "$socket" || { say "redis did not start: $dir/redis.log"; exit 1; }
}

start_node() {
    local n=$1
    alive "$dir/node-$n.pid" && { say "node-$n runs already"; return 0; }
    PAIGOW_REDIS_URL=$url PAIGOW_HOST=127.0.0.1 PAIGOW_PORT=$((node_port + n - 1)) \
        PAIGOW_NODE_NAME=node-$n PAIGOW_DATA_DIR=$dir/node-$n \
        PAIGOW_TOKEN_SECRET=$(cat "$dir/secret") \
        nohup "$bin/paigow-server" serve >>"$dir/node-$n.log" 2>&1 </dev/null &
    echo $! >"$dir/node-$n.pid"
    if ! wait_for 30 http_ok "http://127.0.0.1:$((node_port + n - 1))/readyz"; then
        say "node-$n is not ready: $dir/node-$n.log"
        exit 1
    fi
    say "node-$n ready on ws://127.0.0.1:$((node_port + n - 1))/"
}

stop_node() {
    local n=$1 pid
    alive "$dir/node-$n.pid" || { say "node-$n is not running"; return 0; }
    pid=$(cat "$dir/node-$n.pid")
    kill -TERM "$pid"
    wait_for 60 sh -c "! kill -0 $pid" || { say "node-$n did not stop; killing it"; kill -KILL "$pid"; }
    rm -f "$dir/node-$n.pid"
    say "node-$n stopped ($(grep -o 'tables handed over in [0-9.]* s' "$dir/node-$n.log" | tail -1 || true))"
}

# deploy/haproxy.cfg with this machine's addresses: the balancer on 127.0.0.1:$port,
# node N on 127.0.0.1, no Docker DNS.
write_haproxy_config() {
    local servers="" n
    for n in $(seq 1 "$count"); do
        servers+="    server node-$n 127.0.0.1:$((node_port + n - 1)) check"$'\n'
    done
    awk -v port="$port" -v servers="$servers" -v pidfile="$dir/haproxy.pid" -v cert="$tls_cert" '
        /^\.if defined\(PAIGOW_BALANCER_TLS\)/ { tls = 1; next }  # compose TLS: this has its own
        tls { if (/^\.endif/) tls = 0; next }
        /^resolvers docker/ { skip = 1; next }
        skip && /^$/ { skip = 0; next }
        skip { next }
        /^    log stdout/ { print "    log 127.0.0.1 local0 info"; print "    pidfile " pidfile; next }
        /^    bind :8765/ {
            if (cert != "") print "    bind 127.0.0.1:" port " ssl crt " cert " alpn http/1.1"
            else print "    bind 127.0.0.1:" port
            next
        }
        /^    server node-/ { if (!done) { printf "%s", servers; done = 1 }; next }
        { sub(/ resolvers docker init-addr last,libc,none/, ""); print }
    ' "$root/deploy/haproxy.cfg" >"$dir/haproxy.cfg"
    haproxy -c -q -f "$dir/haproxy.cfg"
}

# Prometheus's configuration for the nodes: scraped every 5 s as job "paigow" (what the
# rules of deploy/prometheus and the dashboard of deploy/grafana expect).
prometheus_config() {
    local targets="" n
    for n in $(seq 1 "$count"); do
        targets+="${targets:+, }\"127.0.0.1:$((node_port + n - 1))\""
    done
    cat <<EOF
global:
  scrape_interval: 5s
  evaluation_interval: 5s
rule_files:
  - $root/deploy/prometheus/rules.yaml
  - $root/deploy/prometheus/alerts.yaml
scrape_configs:
  - job_name: paigow
    static_configs:
      - targets: [$targets]
EOF
}

monitor() {
    command -v prometheus >/dev/null || {
        say "prometheus is missing: install Debian's package (apt-get install prometheus)"
        exit 1
    }
    mkdir -p "$dir/prometheus"
    alive "$dir/prometheus.pid" && { say "prometheus runs already"; return 0; }
    prometheus_config >"$dir/prometheus.yml"
    nohup prometheus --config.file="$dir/prometheus.yml" \
        --storage.tsdb.path="$dir/prometheus" \
        --web.listen-address="127.0.0.1:$prometheus_port" \
        >>"$dir/prometheus.log" 2>&1 </dev/null &
    echo $! >"$dir/prometheus.pid"
    wait_for 30 http_ok "http://127.0.0.1:$prometheus_port/-/ready" ||
        { say "prometheus did not start: $dir/prometheus.log"; exit 1; }
    say "prometheus: http://127.0.0.1:$prometheus_port/ (dashboard: deploy/grafana/paigow.json)"
}

up() {
    install
    mkdir -p "$dir"
    [ -f "$dir/secret" ] || "$bin/python" -c 'import secrets; print(secrets.token_hex(32))' >"$dir/secret"
    chmod 600 "$dir/secret"
    start_redis
    local n
    for n in $(seq 1 "$count"); do
        start_node "$n"
    done
    write_haproxy_config
    alive "$dir/haproxy.pid" || haproxy -D -f "$dir/haproxy.cfg"
    wait_for 15 balancer_ok || { say "the balancer does not answer"; exit 1; }
    say "balancer: $ws://localhost:$port/ (tokens: PAIGOW_TOKEN_SECRET=\$(cat $dir/secret))"
    status
}

status() {
    "$bin/paigow-server" --redis-url "$url" nodes
}

down() {
    if alive "$dir/haproxy.pid"; then
        kill -USR1 "$(cat "$dir/haproxy.pid")"  # soft stop: no new connection
    fi
    local n
    for n in $(seq 1 "$count"); do
        stop_node "$n"
    done
    if alive "$dir/haproxy.pid"; then
        kill -TERM "$(cat "$dir/haproxy.pid")" || true
    fi
    rm -f "$dir/haproxy.pid"
    if alive "$dir/prometheus.pid"; then
        kill -TERM "$(cat "$dir/prometheus.pid")" || true
    fi
    rm -f "$dir/prometheus.pid"
    if alive "$dir/redis.pid"; then
        local pid
        pid=$(cat "$dir/redis.pid")
        "$bin/redis-cli" -s "$socket" shutdown >/dev/null 2>&1 || kill -TERM "$pid"
        wait_for 20 sh -c "! kill -0 $pid" || kill -KILL "$pid"
    fi
    say "stopped (logs and data in $dir)"
}

case ${1:-} in
up) up ;;
down) down ;;
status) status ;;
install) install ;;
monitor) monitor ;;
prometheus-config) prometheus_config ;;
start) start_node "${2:?which node}" ;;
stop) stop_node "${2:?which node}" ;;
restart)
    stop_node "${2:?which node}"
    start_node "$2"
    ;;
*)
    sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
