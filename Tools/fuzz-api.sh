#!/usr/bin/env bash
# Fuzzes the live HTTP service from Schemas/openapi.yaml with schemathesis (make fuzz-api).
# Starts the built server on a free loopback port with a temporary ledger, creates an admin key, runs
# schemathesis bounded in time, checking for 5xx answers and responses that break the schema, then stops
# the server. Exits non-zero on any failure.
#   FUZZ_MAX_EXAMPLES (default 25) examples per operation; FUZZ_TIME_LIMIT (default 300) seconds in all;
#   ACTIVITY_LEDGER (default .build/debug/activity-ledger, built if missing) the binary to run.
set -euo pipefail

cd "$(dirname "$0")/.."
max_examples="${FUZZ_MAX_EXAMPLES:-25}"
time_limit="${FUZZ_TIME_LIMIT:-300}"
binary="${ACTIVITY_LEDGER:-.build/debug/activity-ledger}"
spec="Schemas/openapi.yaml"

if ! command -v schemathesis >/dev/null 2>&1; then
    echo "fuzz-api: installing schemathesis from PyPI"
    python3 -m pip install --quiet --user 'schemathesis>=4,<5'
    export PATH="$HOME/.local/bin:$PATH"
fi
if [ ! -x "$binary" ]; then
    echo "fuzz-api: building activity-ledger"
    swift build --product activity-ledger
fi

work="$(mktemp -d)"
server_pid=""
cleanup() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

db="$work/ledger.sqlite"
key="$("$binary" keys create --app com.example.fuzz --scope ingest,read,admin --db "$db" 2>/dev/null)"

"$binary" serve --db "$db" --host 127.0.0.1 --port 0 --max-body-bytes 1048576 >"$work/serve.out" 2>"$work/serve.err" &
server_pid=$!

port=""
for _ in $(seq 1 100); do
    port="$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$work/serve.out" | head -1)"
    [ -n "$port" ] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.err" >&2; echo "fuzz-api: server exited" >&2; exit 1; }
    sleep 0.1
done
[ -n "$port" ] || { echo "fuzz-api: server did not report its port" >&2; exit 1; }
echo "fuzz-api: server on port $port, $max_examples examples per operation, at most ${time_limit}s"

status=0
timeout --signal=INT "$time_limit" schemathesis run "$spec" \
    --url "http://127.0.0.1:$port" \
    --header "Authorization: Bearer $key" \
    --checks not_a_server_error,response_schema_conformance \
    --max-examples "$max_examples" \
    --request-timeout 10 \
    --no-color || status=$?

if [ "$status" -eq 124 ]; then
    echo "fuzz-api: schemathesis did not finish within ${time_limit}s" >&2
fi
if [ "$status" -ne 0 ]; then
    echo "fuzz-api: FAILED (exit $status); server log:" >&2
    tail -50 "$work/serve.err" >&2 || true
    exit "$status"
fi
echo "fuzz-api: passed"
