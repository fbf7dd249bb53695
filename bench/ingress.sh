#!/usr/bin/env bash
# CPU per request of the converting ingresses beside chat completions, in one router process, one run:
#
#   bench/ingress.sh                       # 3 rounds of 10 s per route and mode, 64 connections
#   ROUNDS=5 DURATION=20s bench/ingress.sh
#
# One simulator upstream and one router (bench/config.yaml: a plain backend, no Dynamo, so what differs
# between the routes is the conversion alone: the pin is the same work on every route). For each round the
# routes /v1/chat/completions, /v1/messages and /v1/responses take turns, buffered and streamed (CHUNKS SSE
# events per stream), each driven by wrk (bench/side.lua with BODY_WIRE) for DURATION while the router's
# user and system CPU ticks are read from /proc/<pid>/stat before and after. The summary is the median CPU
# per request of each route and mode, and its ratio to chat completions in the same mode.
# Knobs: ROUNDS (3), DURATION (10s), WARMUP (20s per route and mode, once), CONNECTIONS (64), CHUNKS (16),
#   ROUTER_JAVA_OPTS (as bench/run.sh), BENCH_PORT_BASE (47600).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-20s}
CONNECTIONS=${CONNECTIONS:-64}
CHUNKS=${CHUNKS:-16}
ROUTER_JAVA_OPTS=${ROUTER_JAVA_OPTS:-"-Xms128m -Xmx128m -XX:+UseParallelGC -XX:+ExitOnOutOfMemoryError"}
base=${BENCH_PORT_BASE:-47600}
export BENCH_UPSTREAM_PORT=$base BENCH_ROUTER_PORT=$((base + 80))
SIM_JAR=router-sim/target/continuum-sim.jar
ROUTER_JAR=${ROUTER_JAR:-router-app/target/continuum-router.jar}
for f in "$ROUTER_JAR" "$SIM_JAR"; do
  [ -f "$f" ] || { echo "bench/ingress.sh: $f not found (./mvnw -B -ntp -q -DskipTests package)" >&2; exit 1; }
done
command -v wrk >/dev/null || { echo "bench/ingress.sh: needs wrk (apt-get install wrk)" >&2; exit 1; }
# shellcheck source=bench/lib.sh
. bench/lib.sh
require_free_ports bench/ingress.sh $BENCH_UPSTREAM_PORT $BENCH_ROUTER_PORT

start upstream java -Xms256m -Xmx256m -jar "$SIM_JAR" upstream --port "$BENCH_UPSTREAM_PORT" --chunks "$CHUNKS"
wait_http upstream "http://127.0.0.1:$BENCH_UPSTREAM_PORT/v1/models"
# shellcheck disable=SC2086
start router java $ROUTER_JAVA_OPTS -jar "$ROUTER_JAR" serve --config bench/config.yaml
router=${PID[router]}
wait_http router "http://127.0.0.1:$BENCH_ROUTER_PORT/health"

ticks() { awk '{print $14, $15}' "/proc/$1/stat"; } # user and system clock ticks
hz=$(getconf CLK_TCK)
path() { case $1 in chat) echo /v1/chat/completions ;; messages) echo /v1/messages ;; responses) echo /v1/responses ;; esac; }

measure() { # round wire mode
  local url out u0 s0 u1 s1 requests errors
  url="http://127.0.0.1:$BENCH_ROUTER_PORT$(path "$2")"
  read -r u0 s0 < <(ticks "$router")
  out=$(BODY_WIRE=$2 BODY_STREAM=$([ "$3" = streamed ] && echo 1 || echo 0) \
    wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --timeout 10s -s bench/side.lua "$url" | grep '^RESULT')
  read -r u1 s1 < <(ticks "$router")
  requests=$(sed -E 's/.*requests=([0-9]+).*/\1/' <<<"$out")
  errors=$(sed -E 's/.*err_status=([0-9]+).*/\1/' <<<"$out")
  printf '%s\t%s\t%s\t%d\t%d\t%.1f\n' "$1" "$2" "$3" "$requests" "$errors" \
    "$(awk -v r="$requests" -v t=$((u1 - u0 + s1 - s0)) -v hz="$hz" 'BEGIN {print t / hz / r * 1e6}')" \
    | tee -a "$work/results.tsv"
}

echo "bench/ingress.sh: $ROUNDS rounds of $DURATION per route and mode, $CONNECTIONS connections, $CHUNKS events per stream, warm-up $WARMUP each; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for wire in chat messages responses; do
  for mode in buffered streamed; do
    BODY_WIRE=$wire BODY_STREAM=$([ "$mode" = streamed ] && echo 1 || echo 0) wrk -t1 -c"$CONNECTIONS" \
      -d"$WARMUP" --timeout 10s -s bench/side.lua "http://127.0.0.1:$BENCH_ROUTER_PORT$(path $wire)" >/dev/null
  done
done
printf 'round\troute\tmode\trequests\tnon-2xx\tCPU us/req\n'
for round in $(seq 1 "$ROUNDS"); do
  for mode in buffered streamed; do
    for wire in chat messages responses; do
      measure "$round" "$wire" "$mode"
    done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 - "$work/results.tsv" <<'PY'
import statistics, sys
cpu = {}
for line in open(sys.argv[1]):
    _, wire, mode, _, _, us = line.rstrip("\n").split("\t")
    cpu.setdefault((wire, mode), []).append(float(us))
print("\n| route | mode | median CPU us/req | vs chat completions |")
print("|---|---|---|---|")
for mode in ("buffered", "streamed"):
    chat = statistics.median(cpu[("chat", mode)])
    for wire in ("chat", "messages", "responses"):
        m = statistics.median(cpu[(wire, mode)])
        print(f"| {wire} | {mode} | {m:.1f} | {m / chat:.2f}x |")
PY
