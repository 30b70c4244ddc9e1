#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests and the bench: it never touches a cluster it did not start.
#
#   Tools/pg-cluster.sh start DIR   initdb in DIR (a new or empty folder), start a server on a free loopback port
#                                   with trust auth for loopback only, create the database `ledger`, and print
#                                   its URL (also written to DIR/url)
#   Tools/pg-cluster.sh stop DIR    stop the server started in DIR and delete DIR (only a DIR this script made:
#                                   it holds DIR/.activity-ledger-cluster)
#   Tools/pg-cluster.sh run CMD…    start a cluster in a temporary folder, run CMD with LEDGER_TEST_POSTGRES set to
#                                   its URL, and stop it afterwards, also when CMD fails or is interrupted
#
# Installs Debian's postgresql-15 when no initdb is found. As root, the cluster runs as the `postgres` user
# (initdb refuses root); otherwise as the caller.
set -euo pipefail

pg_bin() {
    local dir
    for dir in /usr/lib/postgresql/*/bin; do
        [ -x "$dir/initdb" ] && { echo "$dir"; return; }
    done
    if [ "$(id -u)" = 0 ]; then
        echo "pg-cluster: installing postgresql-15" >&2
        apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >&2
    else
        sudo apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive sudo apt-get install -y -qq postgresql-15 >&2
    fi
    for dir in /usr/lib/postgresql/*/bin; do
        [ -x "$dir/initdb" ] && { echo "$dir"; return; }
    done
    echo "pg-cluster: no initdb after installing postgresql-15" >&2
    exit 1
}

# Runs a command as the cluster's owner.
as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start() {
    local dir="$1" bin port
    bin="$(pg_bin)"
    mkdir -p "$dir"
    if [ -n "$(ls -A "$dir")" ]; then
        echo "pg-cluster: $dir is not empty; give a new folder" >&2
        exit 2
    fi
    touch "$dir/.activity-ledger-cluster"
    [ "$(id -u)" = 0 ] && chown postgres "$dir" && chmod 700 "$dir"
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    port="$(free_port)"
    # Loopback only, no Unix socket in a shared folder; fsync stays on (the tests kill servers and count events).
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='$dir' -c max_connections=200" \
        start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres ledger
    echo "postgresql://postgres@127.0.0.1:$port/ledger" | tee "$dir/url"
}

stop() {
    local dir="$1" bin
    [ -f "$dir/.activity-ledger-cluster" ] || { echo "pg-cluster: $dir is not a cluster this script started" >&2; exit 2; }
    bin="$(pg_bin)"
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
}

case "${1:-}" in
start) start "$2" ;;
stop) stop "$2" ;;
run)
    shift
    dir="$(mktemp -d /tmp/activity-ledger-pg.XXXXXX)"
    rmdir "$dir"
    trap 'stop "$dir"; exit 130' INT TERM
    url="$(start "$dir")" || { stop "$dir" 2>/dev/null; exit 1; }
    set +e
    LEDGER_TEST_POSTGRES="$url" "$@"
    status=$?
    stop "$dir"
    exit $status
    ;;
*)
    echo "usage: $0 start DIR | stop DIR | run CMD..." >&2
    exit 2
    ;;
esac
