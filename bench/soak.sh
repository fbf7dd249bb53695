#!/usr/bin/env bash
# Soak: STREAMS concurrent SSE streams for DURATION through the router's pinned Dynamo path (the simulator's
# fleet and direct-mode frontend behind it), with Netty's leak detection at LEAK_DETECTION in the router. Every
# SAMPLE_EVERY it forces a full GC in the router and samples its live heap (jstat's old generation after
# the GC), its RSS, its open file descriptors and its listen backlog; at the end it fits a line through the
# samples taken after WARMUP once the backlog is empty (every stream accepted) and fails on any failed stream, any leak report, or a slope above its bound. Not part of
# bin/test (it takes DURATION plus about a minute); docs/reliability.md records a run.
#
#   bench/soak.sh                                  # 1,000 streams for 10 minutes
#   STREAMS=100 DURATION=60 WARMUP=20 bench/soak.sh  # a quick check of the script itself
#
# Knobs (environment): STREAMS (1000), DURATION seconds (600), WARMUP seconds excluded from the slopes
#   (60), SAMPLE_EVERY seconds (15), CHUNKS per stream (20) and CHUNK_DELAY_MS (200), so a stream lasts
#   about 4 s and the fleet serves about STREAMS / 4 streams per second; ROUTER_JAVA_OPTS; bounds
#   MAX_HEAP_SLOPE_MB_MIN (0.5), MAX_RSS_SLOPE_MB_MIN (2), MAX_FD_GROWTH (16, last sample minus the first
#   after warm-up); LOG_LEVEL of the router (info); LEAK_DETECTION (advanced: one buffer in 128 tracked with
#   its access points; paranoid tracks every buffer and, at 1,000 streams on a shared 2-core machine, slows the
#   router's event loops by seconds, so its 2 s health probe times out and the backend is marked down: see
#   docs/reliability.md "Soak"; use paranoid with fewer STREAMS); BENCH_PORT_BASE (48000); SAMPLES_OUT (a file to keep the
#   samples in, as CSV, and beside it the router's and the fleet's logs, wrk's output, the router's /metrics
#   scraped after the run and the first failed streams' status and body).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

STREAMS=${STREAMS:-1000}
DURATION=${DURATION:-600}
WARMUP=${WARMUP:-60}
SAMPLE_EVERY=${SAMPLE_EVERY:-15}
CHUNKS=${CHUNKS:-20}
CHUNK_DELAY_MS=${CHUNK_DELAY_MS:-200}
ROUTER_JAVA_OPTS=${ROUTER_JAVA_OPTS:-"-Xms256m -Xmx256m -XX:+UseParallelGC -XX:+ExitOnOutOfMemoryError"}
MAX_HEAP_SLOPE_MB_MIN=${MAX_HEAP_SLOPE_MB_MIN:-0.5}
MAX_RSS_SLOPE_MB_MIN=${MAX_RSS_SLOPE_MB_MIN:-2}
MAX_FD_GROWTH=${MAX_FD_GROWTH:-16}
LOG_LEVEL=${LOG_LEVEL:-info}
LEAK_DETECTION=${LEAK_DETECTION:-advanced}
base=${BENCH_PORT_BASE:-48000}
export BENCH_FRONTEND_PORT=$((base + 1)) BENCH_ROUTER_DYNAMO_PORT=$((base + 90))
SIM_JAR=router-sim/target/continuum-sim.jar
ROUTER_JAR=${ROUTER_JAR:-router-app/target/continuum-router.jar}

missing=()
for tool in wrk curl java jcmd jstat python3; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
for jar in "$SIM_JAR" "$ROUTER_JAR"; do
  [ -f "$jar" ] || missing+=("$jar (./mvnw -B -ntp -q -DskipTests package)")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bench/soak.sh: missing: ${missing[*]} (wrk: apt-get install wrk)" >&2
  exit 1
fi
# 1,000 client sockets plus as many upstream ones, in this shell's wrk and in the router.
ulimit -n 65536 2>/dev/null || true

# shellcheck source=bench/lib.sh
. bench/lib.sh
require_free_ports bench/soak.sh "$BENCH_FRONTEND_PORT" "$BENCH_ROUTER_DYNAMO_PORT"

export BENCH_DYNAMO_ROOT=$work/dynamo-store
mkdir -p "$BENCH_DYNAMO_ROOT"
# Two decode workers with enough slots that no stream queues: the soak measures the router, not a queue.
start fleet java -Xms512m -Xmx512m -Xlog:gc:file="$work/fleet-gc.log" -jar "$SIM_JAR" fleet --root "$BENCH_DYNAMO_ROOT" --prefill 1 --decode 2 \
  --slots "$STREAMS" --kv-blocks 65536 --port "$BENCH_FRONTEND_PORT" --chunks "$CHUNKS" \
  --chunk-delay-ms "$CHUNK_DELAY_MS"
wait_http fleet "http://127.0.0.1:$BENCH_FRONTEND_PORT/"
# The router's config: bench/run.sh's pinned path, with a pool that holds every stream's upstream connection.
sed -e 's/connection_pool_size: 512/connection_pool_size: 2048/' -e "s/level: warn/level: $LOG_LEVEL/" \
  bench/side-router-dynamo.yaml >"$work/router.yaml"
# shellcheck disable=SC2086
start router java $ROUTER_JAVA_OPTS -XX:NativeMemoryTracking=summary -Dio.netty.leakDetection.level="$LEAK_DETECTION" -jar "$ROUTER_JAR" serve \
  --config "$work/router.yaml"
url="http://127.0.0.1:$BENCH_ROUTER_DYNAMO_PORT/v1/chat/completions"
body='{"model":"demo-model","stream":true,"messages":[{"role":"user","content":"hi"}]}'
for _ in $(seq 1 300); do
  out=$(curl -s -H 'Content-Type: application/json' -d "$body" "$url" 2>/dev/null || true)
  [[ "$out" == *"data: [DONE]"* ]] && break
  kill -0 "${PID[router]}" 2>/dev/null || { echo "router exited; its log:" >&2; tail -20 "$work/router.log" >&2; exit 1; }
  sleep 0.5
done
[[ "$out" == *"data: [DONE]"* ]] || { echo "bench/soak.sh: no streamed answer through the router" >&2; tail -20 "$work/router.log" >&2; exit 1; }

router_pid=${PID[router]}
samples=$work/samples.csv
echo "t_s,heap_live_kb,rss_kb,fds,accept_queue" >"$samples"
sample() { # t: a full GC, then the old generation's use (ParallelGC's live set), RSS, fds, unaccepted connections
  jcmd "$router_pid" GC.run >/dev/null
  local ou rss fds queue
  ou=$(jstat -gc "$router_pid" | awk 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == "OU") c = i} NR == 2 {print $c}')
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$router_pid/status")
  fds=$(find "/proc/$router_pid/fd" -mindepth 1 -maxdepth 1 | wc -l)
  queue=$(ss -Hltn "( sport = :$BENCH_ROUTER_DYNAMO_PORT )" | awk '{q += $2} END {print q + 0}')
  echo "$1,$ou,$rss,$fds,$queue" >>"$samples"
}

echo "bench/soak.sh: $STREAMS streams for ${DURATION}s (load average before: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
export FAILED_OUT=$work/failed.txt
# What the router's health checker sees, measured from outside: every second, the frontend's /v1/models (the
# probe's target) and the router's own /health, status and seconds; a slow frontend answer here next to a
# "health healthy -> down" line in the router's log points at the fleet, a slow /health at the router.
probes=$work/probes.csv
echo "t_s,frontend_status,frontend_s,router_status,router_s" >"$probes"
probe_loop() {
  local t0 f r
  t0=$(date +%s)
  while :; do
    f=$(curl -s -o /dev/null -m 30 -w '%{http_code},%{time_total}' "http://127.0.0.1:$BENCH_FRONTEND_PORT/v1/models" || true)
    r=$(curl -s -o /dev/null -m 30 -w '%{http_code},%{time_total}' "http://127.0.0.1:$BENCH_ROUTER_DYNAMO_PORT/health" || true)
    echo "$(( $(date +%s) - t0 )),${f:-000,0},${r:-000,0}" >>"$probes"
    sleep 1
  done
}
probe_loop &
all_pids+=($!)
start wrk wrk -t1 -c"$STREAMS" -d"${DURATION}s" --timeout 60s -s bench/soak.lua "$url"
started=$(date +%s)
while kill -0 "${PID[wrk]}" 2>/dev/null; do
  now=$(( $(date +%s) - started ))
  kill -0 "$router_pid" 2>/dev/null || { echo "router exited mid-soak; its log:" >&2; tail -20 "$work/router.log" >&2; exit 1; }
  sample "$now"
  # Native memory: a baseline once the warm-up is over, diffed at the end, says what RSS growth is made of.
  if [ -z "${nmt_base:-}" ] && [ "$now" -ge "$WARMUP" ]; then
    jcmd "$router_pid" VM.native_memory baseline >/dev/null && nmt_base=$now
  fi
  sleep "$SAMPLE_EVERY"
done
wait "${PID[wrk]}" || true
jcmd "$router_pid" VM.native_memory summary.diff scale=KB >"$work/nmt-diff.txt" 2>&1 || true
sample "$(( $(date +%s) - started ))" # the idle router after the last stream
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
curl -s "http://127.0.0.1:$BENCH_ROUTER_DYNAMO_PORT/metrics" >"$work/metrics.txt" || true
grep '^FAILED_BY_STATUS' "$work/wrk.log" >&2 || true
awk -F, 'NR > 1 {n++; if ($3 > fm) fm = $3; if ($3 >= 2) fs++; if ($5 > rm) rm = $5; if ($5 >= 2) rs++}
  END {printf "bench/soak.sh: %d probes a second apart: frontend /v1/models slowest %.2f s (%d at 2 s or more), router /health slowest %.2f s (%d at 2 s or more)\n", n, fm, fs, rm, rs}' \
  "$probes" >&2
[ -s "$work/nmt-diff.txt" ] && { echo "bench/soak.sh: router native memory, end of load vs ${nmt_base:-?} s:" >&2
  grep -E '^(Total|-  *[A-Z][A-Za-z ]+ \()' "$work/nmt-diff.txt" | grep -E 'committed=[0-9]+KB [+-]' >&2 || true; }
echo "bench/soak.sh: router health transitions: $(grep -o 'health [a-z_]* -> [a-z_]*' "$work/router.log" | sort | uniq -c | tr -s ' \n' ' ')" >&2
if [ -s "$FAILED_OUT" ]; then echo "bench/soak.sh: the first failed streams:" >&2; cat "$FAILED_OUT" >&2; fi

result=$(grep '^RESULT' "$work/wrk.log" || true)
if [ -n "${SAMPLES_OUT:-}" ]; then
  cp "$samples" "$SAMPLES_OUT"
  for f in router.log fleet.log wrk.log metrics.txt probes.csv fleet-gc.log nmt-diff.txt; do cp "$work/$f" "$SAMPLES_OUT.$f"; done
  [ -f "$FAILED_OUT" ] && cp "$FAILED_OUT" "$SAMPLES_OUT.failed.txt"
fi
leaks=$(grep -c 'LEAK:' "$work/router.log" || true)
python3 - "$samples" "$WARMUP" "$result" "$leaks" "$STREAMS" "$DURATION" "$load_after" \
  "$MAX_HEAP_SLOPE_MB_MIN" "$MAX_RSS_SLOPE_MB_MIN" "$MAX_FD_GROWTH" <<'PY'
import csv, sys
path, warmup, result, leaks, streams, duration, load = sys.argv[1:8]
max_heap, max_rss, max_fd = float(sys.argv[8]), float(sys.argv[9]), int(sys.argv[10])
rows = [r for r in csv.DictReader(open(path))]
# The last row is the idle router after the run: shown, but not part of the slope under load. The steady
# state starts after the warm-up and once the router has accepted every connection (on a starved machine
# the ramp through the listen backlog takes longer than the warm-up).
ramp = next((float(r["t_s"]) for r in rows[:-1] if int(r["accept_queue"]) == 0 and float(r["t_s"]) >= float(warmup)), None)
# Never all accepted: the slopes are still shown (over the samples after the warm-up), and the run fails.
steady = [r for r in rows[:-1] if float(r["t_s"]) >= (ramp if ramp is not None else float(warmup))]
if len(steady) < 3:
    print("soak: FAILED: fewer than 3 samples after the warm-up")
    sys.exit(1)
queued = [int(r["accept_queue"]) for r in rows[:-1]]
def slope(key, scale):  # least squares, units per minute
    xs = [float(r["t_s"]) / 60 for r in steady]
    ys = [float(r[key]) / scale for r in steady]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
fields = dict(kv.split("=") for kv in result.split()[1:]) if result else {}
errors = sum(int(fields.get(k, 1)) for k in ("failed_streams", "err_connect", "err_read", "err_write",
                                                "err_status", "err_timeout"))
heap = slope("heap_live_kb", 1024)
rss = slope("rss_kb", 1024)
fd_growth = int(steady[-1]["fds"]) - int(steady[0]["fds"]) if steady else 0
first, last = steady[0], steady[-1]
print(f"soak: {streams} concurrent streams, {duration} s; {fields.get('requests', '?')} requests, "
      f"{fields.get('completed', '?')} complete streams, errors {errors} ({result.strip() or 'no wrk result'})")
print(f"soak: live heap {float(first['heap_live_kb']) / 1024:.1f} -> {float(last['heap_live_kb']) / 1024:.1f} MiB, "
      f"slope {heap:+.3f} MiB/min (bound {max_heap})")
print(f"soak: RSS {int(first['rss_kb']) // 1024} -> {int(last['rss_kb']) // 1024} MiB, slope {rss:+.3f} MiB/min "
      f"(bound {max_rss})")
print(f"soak: fds {first['fds']} -> {last['fds']} (growth {fd_growth}, bound {max_fd}); idle after: "
      f"{rows[-1]['fds']} fds, {int(rows[-1]['rss_kb']) // 1024} MiB RSS; leak reports {leaks}; "
      f"{len(steady)} samples from {steady[0]['t_s']} s; load average after {load}")
print("soak: listen backlog (connections not yet accepted) per sample: " + " ".join(map(str, queued))
      + (f"; every connection accepted by {ramp:.0f} s" if ramp is not None else "; never empty"))
failed = []
if ramp is None: failed.append("not every stream was accepted")
if errors: failed.append("errors")
if int(leaks): failed.append("leak reports")
if heap > max_heap: failed.append("heap slope")
if rss > max_rss: failed.append("RSS slope")
if fd_growth > max_fd: failed.append("fd growth")
if failed:
    print("soak: FAILED: " + ", ".join(failed))
    sys.exit(1)
print("soak: passed")
PY
