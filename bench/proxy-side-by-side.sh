#!/usr/bin/env bash
# Side-by-side proxy benchmark: the same wrk load, buffered and streaming, sent directly to the
# simulator upstream and through the router, in one run on one machine. Prints a Markdown table.
# Needs: wrk (Debian package), the built jars (./mvnw -q -DskipTests package).
# Knobs: DURATION (15s), CONNECTIONS (64), THREADS (1), CHUNKS (16 SSE events per stream).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
duration=${DURATION:-15s}
connections=${CONNECTIONS:-64}
threads=${THREADS:-1}
chunks=${CHUNKS:-16}
export BENCH_UPSTREAM_PORT=${BENCH_UPSTREAM_PORT:-18000}
export BENCH_ROUTER_PORT=${BENCH_ROUTER_PORT:-18080}
command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)" >&2; exit 1; }

logdir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

java -jar router-sim/target/continuum-sim.jar upstream --port "$BENCH_UPSTREAM_PORT" --chunks "$chunks" \
  > "$logdir/upstream.log" 2>&1 &
pids+=($!)
java -Xms512m -Xmx512m -jar router-app/target/continuum-router.jar serve --config bench/config.yaml \
  > "$logdir/router.log" 2>&1 &
pids+=($!)

wait_for() { for _ in $(seq 1 100); do curl -fs "$1" >/dev/null 2>&1 && return 0; sleep 0.2; done; echo "no answer from $1" >&2; exit 1; }
wait_for "http://127.0.0.1:$BENCH_UPSTREAM_PORT/v1/models"
wait_for "http://127.0.0.1:$BENCH_ROUTER_PORT/v1/models"

run() { # target-name url stream
  # Warm-up (JIT) before the measured run.
  BODY_STREAM=$3 wrk -t"$threads" -c"$connections" -d5s -s bench/post.lua "$2" >/dev/null
  local out
  out=$(BODY_STREAM=$3 wrk -t"$threads" -c"$connections" -d"$duration" --latency -s bench/post.lua "$2")
  local rps p50 p99 errors
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  errors=$(awk '/Non-2xx|Socket errors/ {printf "%s ", $0}' <<<"$out")
  printf '| %s | %s | %s | %s | %s | %s |\n' "$1" "$([ "$3" = 1 ] && echo streaming || echo buffered)" \
    "$rps" "$p50" "$p99" "${errors:-none}"
}

echo "wrk -t$threads -c$connections -d$duration, $chunks SSE events per stream, $(nproc) cores"
echo
echo "| target | request | requests/s | p50 | p99 | errors |"
echo "|---|---|---|---|---|---|"
run direct "http://127.0.0.1:$BENCH_UPSTREAM_PORT/v1/chat/completions" 0
run router "http://127.0.0.1:$BENCH_ROUTER_PORT/v1/chat/completions" 0
run direct "http://127.0.0.1:$BENCH_UPSTREAM_PORT/v1/chat/completions" 1
run router "http://127.0.0.1:$BENCH_ROUTER_PORT/v1/chat/completions" 1
