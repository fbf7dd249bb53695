#!/usr/bin/env bash
# A/B of two router builds in front of the same upstream: CPU per request, user and system apart.
#
#   bench/ab.sh before.jar after.jar                      # 5 alternating pairs, buffered, 64 connections
#   PAIRS=3 MODE=streaming bench/ab.sh before.jar after.jar
#
# Each run starts the router from one jar (same flags and config as bench/run.sh), warms it (WARMUP, 30 s:
# the JIT needs that long on a small shared machine), then drives it with wrk for DURATION and reads the
# router's user and system CPU ticks from /proc/<pid>/stat before and after. Runs alternate A, B, A, B so a
# drift of the machine's load hits both; the summary is the median of each. CPU per request is the number to
# compare: on a machine where wrk, the upstream and the router share the cores, requests/s follows the sum
# of the three processes' costs, while the router's own CPU per request moves only with the router.
# Knobs: PAIRS (5), MODE (buffered | streaming), CHUNKS (16 SSE events per stream, as bench/run.sh),
#   CONNECTIONS (64), DURATION (10s), WARMUP (30s),
#   ROUTER_JAVA_OPTS (as bench/run.sh), BENCH_PORT_BASE (47500).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

[ $# -eq 2 ] || { sed -n '2,6p' "$0" >&2; exit 2; }
JAR_A=$1
JAR_B=$2
PAIRS=${PAIRS:-5}
MODE=${MODE:-buffered}
CHUNKS=${CHUNKS:-16}
CONNECTIONS=${CONNECTIONS:-64}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-30s}
ROUTER_JAVA_OPTS=${ROUTER_JAVA_OPTS:-"-Xms128m -Xmx128m -XX:+UseParallelGC -XX:+ExitOnOutOfMemoryError"}
base=${BENCH_PORT_BASE:-47500}
export BENCH_UPSTREAM_PORT=$base BENCH_ROUTER_PORT=$((base + 80))
SIM_JAR=router-sim/target/continuum-sim.jar
for f in "$JAR_A" "$JAR_B" "$SIM_JAR"; do
  [ -f "$f" ] || { echo "bench/ab.sh: $f not found (./mvnw -B -ntp -q -DskipTests package)" >&2; exit 1; }
done
command -v wrk >/dev/null || { echo "bench/ab.sh: needs wrk (apt-get install wrk)" >&2; exit 1; }
# shellcheck source=bench/lib.sh
. bench/lib.sh
require_free_ports bench/ab.sh $BENCH_UPSTREAM_PORT $BENCH_ROUTER_PORT

start upstream java -Xms256m -Xmx256m -jar "$SIM_JAR" upstream --port "$BENCH_UPSTREAM_PORT" --chunks "$CHUNKS"
wait_http upstream "http://127.0.0.1:$BENCH_UPSTREAM_PORT/v1/models"

url="http://127.0.0.1:$BENCH_ROUTER_PORT/v1/chat/completions"
export BODY_STREAM=$([ "$MODE" = streaming ] && echo 1 || echo 0)
ticks() { awk '{print $14, $15}' "/proc/$1/stat"; } # user and system clock ticks
hz=$(getconf CLK_TCK)

run() { # label jar
  local router out u0 s0 u1 s1 requests
  # shellcheck disable=SC2086
  start "router-$1" java $ROUTER_JAVA_OPTS -jar "$2" serve --config bench/config.yaml
  router=${PID[router-$1]}
  wait_http "router-$1" "http://127.0.0.1:$BENCH_ROUTER_PORT/health"
  wrk -t1 -c"$CONNECTIONS" -d"$WARMUP" --timeout 10s -s bench/side.lua "$url" >/dev/null
  read -r u0 s0 < <(ticks "$router")
  out=$(wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --timeout 10s -s bench/side.lua "$url" | grep '^RESULT')
  read -r u1 s1 < <(ticks "$router")
  kill "$router"
  wait "$router" 2>/dev/null || true
  requests=$(sed -E 's/.*requests=([0-9]+).*/\1/' <<<"$out")
  awk -v l="$1" -v r="$requests" -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v hz="$hz" -v o="$out" 'BEGIN {
    split(o, f, " "); d = 0; for (i in f) if (f[i] ~ /^duration_us=/) { sub(/duration_us=/, "", f[i]); d = f[i] }
    printf "%s\t%d\t%.0f\t%.1f\t%.1f\t%.1f\n", l, r, r * 1e6 / d, u / hz / r * 1e6, s / hz / r * 1e6, (u + s) / hz / r * 1e6
  }' | tee -a "$work/results.tsv"
}

echo "A = $JAR_A, B = $JAR_B; $MODE ($CHUNKS events per stream), $CONNECTIONS connections, $PAIRS pairs of $DURATION after $WARMUP warm-up each; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
printf 'run\trequests\treq/s\tuser us/req\tsys us/req\tCPU us/req\n'
for i in $(seq 1 "$PAIRS"); do
  run A "$JAR_A"
  run B "$JAR_B"
done
python3 - "$work/results.tsv" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    label, *vals = line.split("\t")
    rows.setdefault(label, []).append([float(v) for v in vals])
print("\nmedians | req/s | user us/req | sys us/req | CPU us/req")
for label in ("A", "B"):
    cols = list(zip(*rows[label]))
    print(f"{label} | {statistics.median(cols[1]):.0f} | {statistics.median(cols[2]):.1f} | "
          f"{statistics.median(cols[3]):.1f} | {statistics.median(cols[4]):.1f}")
a, b = (statistics.median(list(zip(*rows[k]))[4]) for k in ("A", "B"))
print(f"B / A CPU per request: {b / a:.2f}")
PY
