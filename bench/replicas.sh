#!/usr/bin/env bash
# Replica harness (docs/replicas.md): the KV replay of bench/kv-replay.sh (a Mooncake trace against a simulated
# fleet of WORKERS aggregated workers with prefix caches) through N KV-aware router replicas behind a round-robin
# balancer (bench/rr-balancer.cjs), the replicas sharing their accounting over a local nats-server
# (dynamo.replicas), for each N of REPLICAS and RUNS times each, and prints one Markdown table: hit rate, simulated
# TTFT p50/p90/p99 (trace milliseconds), the busiest worker's share over the mean, requests per worker, and each
# N's means over its runs as a ratio to N=1's means. Runs alternate (run 1 of every N, then run 2), the balancer
# opens only once every replica is ready by itself, and each run prints, per replica, what the balancer saw (answers
# by status, requests retried away from it, requests that failed in flight on it) and what its picker and prompt
# pipeline did (kv_selection_total, kv_prompts_total, decision totals): docs/replicas.md, "The replica harness".
#
#   bench/replicas.sh TRACE.jsonl
#   REPLICAS="1 3" RUNS=2 KV_EVENTS=off REQUESTS=1000 bench/replicas.sh TRACE.jsonl    # approximate mode
#   REPLICAS=3 KILL_REPLICA_AT=20 bench/replicas.sh TRACE.jsonl     # replica 3 killed 20 s into the replay
#   REPLICAS=3 KILL_NATS_AT=20 NATS_DOWN=5 bench/replicas.sh TRACE.jsonl   # nats-server down 5 s at 20 s
#
# Knobs (environment): REPLICAS ("1 2 3"), RUNS (2), SYNC (on: dynamo.replicas enabled; off: the same N replicas
# without sync, the baseline the issue measured), REQUESTS (1000), SPEEDUP (10), UTILISATION (0.7), WORKERS (8),
# KV_BLOCKS (16384), KV_EVENTS (on; off: approximate mode), KV_MODE (auto), KILL_REPLICA_AT, KILL_NATS_AT,
# NATS_DOWN (5), BENCH_PORT_BASE (48300), ROUTER_JAVA_OPTS, SIM_JAVA_OPTS, SIM_TOKENS, SIM_TOKEN_CACHE, OUT (a file the table is written to),
# LOGS (a directory each run's router, balancer and replay logs are copied to).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

trace=$(readlink -f "${1:?usage: bench/replicas.sh TRACE.jsonl}")
REPLICAS=${REPLICAS:-"1 2 3"}
RUNS=${RUNS:-2}
SYNC=${SYNC:-on}
REQUESTS=${REQUESTS:-1000}
KV_EVENTS=${KV_EVENTS:-on}
KV_MODE=${KV_MODE:-auto}
NATS_DOWN=${NATS_DOWN:-5}
ROUTER_JAVA_OPTS=${ROUTER_JAVA_OPTS:-"-Xms256m -Xmx512m -XX:+UseParallelGC"}
base=${BENCH_PORT_BASE:-48300}
frontend_port=$((base + 1))
balancer_port=$((base + 2))
nats_port=$((base + 3))

# shellcheck source=bench/lib.sh
. bench/lib.sh
replay_preamble bench/replicas.sh node nats-server
require_free_ports bench/replicas.sh "$frontend_port" "$balancer_port" "$nats_port"

router_config() { # run-dir replica-index
  cat <<YAML
server:
  bind_address: "127.0.0.1:$((base + 10 + $2))"
  connection_pool_size: 512
backends:
  - name: dynamo-frontend
    type: openai
    url: "http://127.0.0.1:$frontend_port"
    models: [Qwen/Qwen3-0.6B]
disaggregated_serving:
  enabled: true
admin:
  auth:
    method: bearer_token
    token: replay
dynamo:
  enabled: true
  discovery:
    source: file
    file:
      root: "$1/store"
      namespace: dynamo
      ttl: 10s
      rescan_interval: 1s
  load:
    direct_allow_cidrs: ["127.0.0.0/8"]
  shim:
    backends: [dynamo-frontend]
  kv:
    enabled: true
    pinned_artifacts: [$pins]
    mode: $KV_MODE
  nats:
    servers: ["nats://127.0.0.1:$nats_port"]
    reconnect_wait: 100ms
  replicas:
    enabled: $([ "$SYNC" = on ] && echo true || echo false)
    group: bench
    replica_id: r$2
# The simulated frontend is the only backend: under saturation its /health answered after the 2 s this used to
# allow, the replicas marked it unhealthy and answered 503 no_healthy_backend (docs/benchmarks.md). A saturated
# frontend still serves; 10 s tells that apart from a dead one.
health_checks:
  interval: 5s
  timeout: 10s
logging:
  level: warn
YAML
}

# Each replica lists every worker with its subscriptions connected (kv_metrics, plus kv-events when the fleet
# publishes them) and has loaded the pinned tokenizer; then the balancer opens ($dir/ready).
replica_ready() { # port
  local want=$WORKERS view connected loaded
  [ "$KV_EVENTS" = on ] && want=$((2 * WORKERS))
  view=$(curl -s -H "authorization: Bearer replay" "http://127.0.0.1:$1/admin/dynamo/workers" 2>/dev/null) || return 1
  connected=$(grep -o '"state":"connected"' <<<"$view" | wc -l)
  loaded=$(curl -s "http://127.0.0.1:$1/metrics" 2>/dev/null \
    | awk '/^continuum_dynamo_kv_tokenizer_loads_total\{.*result="loaded"/ { n += $NF } END { print n + 0 }')
  [ "$connected" -ge "$want" ] && awk -v n="$loaded" 'BEGIN { exit !(n >= 1) }'
}
gate_replicas() { # run-dir replicas
  local i t
  for t in $(seq 1 600); do
    for i in $(seq 1 "$2"); do
      replica_ready $((base + 10 + i)) || { sleep 0.2; continue 2; }
    done
    touch "$1/ready"
    echo "bench/replicas.sh: all $2 replicas ready after $((t / 5)) s" >&2
    return 0
  done
  echo "bench/replicas.sh: replicas not all ready after 120 s; the replay will time out" >&2
}

rows=$work/rows.md
echo "bench/replicas.sh: replicas $REPLICAS, $RUNS runs each, sync $SYNC, $WORKERS workers, kv-events $KV_EVENTS," \
  "kv mode $KV_MODE, $REQUESTS requests, speedup $SPEEDUP, utilisation $UTILISATION" >&2
echo "bench/replicas.sh: load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
# Alternated: run 1 of every N, then run 2 of every N, so a change in the machine's load spreads over all N.
for run in $(seq 1 "$RUNS"); do
  for n in $REPLICAS; do
    dir=$work/n$n-run$run
    mkdir -p "$dir/store" "$dir/nats"
    echo "bench/replicas.sh: $n replicas, run $run: load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    start "nats-$n-$run" nats-server -a 127.0.0.1 -p "$nats_port" -js -sd "$dir/nats"
    ports=()
    for i in $(seq 1 "$n"); do
      router_config "$dir" "$i" >"$dir/router-$i.yaml"
      # shellcheck disable=SC2086
      start "router-$n-$run-$i" java $ROUTER_JAVA_OPTS -jar "$ROUTER_JAR" serve --config "$dir/router-$i.yaml"
      ports+=($((base + 10 + i)))
    done
    for i in $(seq 1 "$n"); do
      wait_http "router-$n-$run-$i" "http://127.0.0.1:$((base + 10 + i))/health"
    done
    READY_FILE=$dir/ready start "balancer-$n-$run" node bench/rr-balancer.cjs "$balancer_port" "${ports[@]}"
    wait_http "balancer-$n-$run" "http://127.0.0.1:$balancer_port/health"
    # The balancer forwards nothing until every replica is ready by itself (the replay starts the fleet, then
    # checks readiness through the balancer, one replica per call: alone it let a replica route before its
    # tokenizer was loaded, counted tokenizer_unavailable).
    gate_replicas "$dir" "$n" &
    if [ -n "${KILL_REPLICA_AT:-}" ] && [ "$n" -gt 1 ]; then
      (sleep "$KILL_REPLICA_AT"; kill -9 "${PID[router-$n-$run-$n]}" 2>/dev/null;
       echo "bench/replicas.sh: replica $n killed at ${KILL_REPLICA_AT}s" >&2) &
    fi
    if [ -n "${KILL_NATS_AT:-}" ]; then
      (sleep "$KILL_NATS_AT"; kill -9 "${PID[nats-$n-$run]}" 2>/dev/null;
       echo "bench/replicas.sh: nats-server killed at ${KILL_NATS_AT}s" >&2; sleep "$NATS_DOWN";
       nats-server -a 127.0.0.1 -p "$nats_port" -js -sd "$dir/nats" >"$dir/nats-again.log" 2>&1 &
       echo $! >"$dir/nats-again.pid"
       echo "bench/replicas.sh: nats-server restarted" >&2; sleep 2;
       for i in $(seq 1 "$n"); do
         curl -s -H "authorization: Bearer replay" "http://127.0.0.1:$((base + 10 + i))/admin/dynamo/replicas" \
           >"$dir/replicas-$i-after-nats.json" || true
       done) &
    fi
    # shellcheck disable=SC2086
    java $SIM_JAVA_OPTS $SIM_TOKEN_OPTS -jar "$SIM_JAR" replay --trace "$trace" --tokenizer "$tokenizer" \
      --tokenizer-config "$tokenizer_config" --mode kv-aware --root "$dir/store" \
      --frontend-port "$frontend_port" --workers "$WORKERS" --requests "$REQUESTS" --speedup "$SPEEDUP" \
      --utilisation "$UTILISATION" --kv-blocks "$KV_BLOCKS" --prefill-backlog on --kv-events "$KV_EVENTS" \
      --out "$dir/row.md" --router "http://127.0.0.1:$balancer_port" --admin-token replay \
      | tee "$dir/replay.log" >&2
    for i in $(seq 1 "$n"); do
      curl -s -H "authorization: Bearer replay" "http://127.0.0.1:$((base + 10 + i))/admin/dynamo/replicas" \
        >"$dir/replicas-$i.json" 2>/dev/null || true
      curl -s -H "authorization: Bearer replay" "http://127.0.0.1:$((base + 10 + i))/admin/dynamo/decisions?limit=1" \
        2>/dev/null | node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>{try{console.log(
          "replica '"$i"': decision totals "+JSON.stringify(JSON.parse(s).totals))}catch(e){}})' \
        >>"$dir/sync-metrics.txt" || true
      # Sync's own counters, and what each replica's picker and prompt pipeline did with its share of the trace.
      curl -s "http://127.0.0.1:$((base + 10 + i))/metrics" 2>/dev/null \
        | grep -E '^(continuum_replicas_(published_bytes_total|published_messages_total|dropped_messages_total|resyncs_total)|continuum_dynamo_kv_(selection|prompts)_total|http_requests_total\{.*endpoint="/v1/chat/completions")' \
        | grep -v ' 0.0$' | sed "s/^/replica $i: /" >>"$dir/sync-metrics.txt" || true
    done
    sed "s/^| kv-aware /| $n replicas, run $run /" "$dir/row.md" >>"$rows"
    [ -z "${LOGS:-}" ] || { mkdir -p "$LOGS/n$n-run$run"; cp "$dir"/*.log "$dir"/*.json "$work"/*-"$n"-"$run"*.log \
      "$LOGS/n$n-run$run/" 2>/dev/null || true; }
    # The balancer's attribution: which replica answered (or failed) each request, printed on SIGTERM.
    kill "${PID[balancer-$n-$run]}" 2>/dev/null || true
    wait "${PID[balancer-$n-$run]}" 2>/dev/null || true
    grep '^balancer: ' "$work/balancer-$n-$run.log" | sed "s/^/  $n replicas, run $run: /" >&2 || true
    for i in $(seq 1 "$n"); do kill "${PID[router-$n-$run-$i]}" 2>/dev/null || true; done
    kill "${PID[nats-$n-$run]}" 2>/dev/null || true
    # The nats-server restarted by the kill above is not this shell's child: stopped by its recorded pid.
    [ -f "$dir/nats-again.pid" ] && kill "$(cat "$dir/nats-again.pid")" 2>/dev/null || true
    pkill_pids=$(jobs -p); for p in $pkill_pids; do wait "$p" 2>/dev/null || true; done
    [ -f "$dir/sync-metrics.txt" ] && sed "s/^/  $n replicas, run $run: /" "$dir/sync-metrics.txt" >&2
  done
done
table=$work/table.md
{
  echo "| replicas, run | requests | failed | hit rate | TTFT p50 (ms) | TTFT p90 (ms) | TTFT p99 (ms) | max share / mean | requests per worker |"
  echo "|---|---|---|---|---|---|---|---|---|"
  cat "$rows"
  echo
  # Means per N, and their ratio to N=1 (when measured): columns 4 (hit rate) and 6 (TTFT p90).
  awk -F'|' '{ split($2, a, " "); n = a[1]; if (n ~ /^[0-9]+$/) { h[n] += $5; t[n] += $7; c[n]++ } }
    END { for (n in c) printf "%s replicas: mean hit rate %.4f, mean TTFT p90 %.1f ms%s\n", n, h[n]/c[n], t[n]/c[n],
          (1 in c) ? sprintf(" (%.3f x and %.3f x one router'"'"'s)", (h[n]/c[n])/(h[1]/c[1]), (t[n]/c[n])/(t[1]/c[1])) : "" }' \
    "$rows" | sort
} >"$table"
cat "$table"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -z "${OUT:-}" ] || cp "$table" "$OUT"
