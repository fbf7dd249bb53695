#!/usr/bin/env bash
# KV replay in front of plain vLLM servers (issue 31): the Mooncake trace (hash IDs of 512-token blocks, expanded
# into deterministic text so equal IDs give equal token blocks) replayed against WORKERS simulated vLLM servers
# (`continuum-sim replay --fleet vllm`: each an OpenAI server with a prefix cache, the simulator's prefill model and
# vLLM-format KV events on its own ZMQ PUB and replay sockets), at about UTILISATION of their prefill capacity, once
# per mode:
#   kv-aware          through the router: backends[] selection by the backend KV cache index, fed by the servers'
#                     KV-event streams (transport: zmq), the tokenizer pinned; KV_FALLBACK is its selection_strategy
#   RoundRobin, WeightedRoundRobin, Random, LeastConnections, LeastLatency
#                     through the router with that selection_strategy and no index: the router's non-KV strategies
#                     (ConsistentHash needs a request key the trace does not have)
#   round-robin       pinned by the harness, server after server
#   oracle            pinned by the harness to the server whose cache holds the longest prefix (the servers' own
#                     caches; ties: the server with the least prefill work queued): the hit-rate oracle
#   oracle-ttft       pinned by the harness to the server whose simulated time to first token is lowest
#   bound             no server: every earlier prompt's blocks cached and no queue, what no placement can beat
# and prints one Markdown table (bench/kv-replay.sh's columns: prompt-token cache hit rate, simulated TTFT
# p50/p90/p99 in trace milliseconds, the busiest server's request share over the mean, requests per server) and
# the router's KV selection counters for the kv-aware mode. docs/benchmarks.md records a run.
#
#   bench/vllm-replay.sh TRACE.jsonl
#   MODES="kv-aware LeastConnections oracle" REQUESTS=1000 bench/vllm-replay.sh TRACE.jsonl
#   (default MODES: "kv-aware RoundRobin Random LeastConnections LeastLatency oracle bound")
#
# Knobs (environment), as bench/kv-replay.sh's: MODES, REQUESTS, SPEEDUP (10), UTILISATION (0.7), WORKERS (8),
#   KV_BLOCKS (16384 blocks of 16 tokens per server), MAX_PROMPT_TOKENS (100000), TOKENIZER_DIR, ROUTER_JAVA_OPTS,
#   SIM_JAVA_OPTS, SIM_TOKENS, SIM_TOKEN_CACHE, OUT; and KV_FALLBACK (RoundRobin: the kv-aware router's selection_strategy, which picks the
#   requests the index declines), BENCH_PORT_BASE (48300: the router on +2, the servers from +10 on).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

trace=${1:?usage: bench/vllm-replay.sh TRACE.jsonl}
trace=$(readlink -f "$trace")
MODES=${MODES:-"kv-aware RoundRobin Random LeastConnections LeastLatency oracle bound"}
KV_FALLBACK=${KV_FALLBACK:-RoundRobin}
base=${BENCH_PORT_BASE:-48300}
router_port=$((base + 2))
server_port=$((base + 10))

# shellcheck source=bench/lib.sh
. bench/lib.sh
replay_preamble bench/vllm-replay.sh
ports=("$router_port")
for ((i = 0; i < WORKERS; i++)); do ports+=($((server_port + i))); done
require_free_ports bench/vllm-replay.sh "${ports[@]}"
tokenizer_pin=$(echo "$pins" | cut -d'"' -f2)
tokenizer_config_pin=$(echo "$pins" | cut -d'"' -f4)

router_config() { # mode servers-file: the router in front of the servers the replay listed
  local mode=$1 strategy=$1 name url endpoint replay
  [ "$mode" = kv-aware ] && strategy=$KV_FALLBACK
  cat <<YAML
server:
  bind_address: "127.0.0.1:$router_port"
  connection_pool_size: 512
selection_strategy: $strategy
backends:
YAML
  while read -r name url endpoint replay; do
    echo "  - {name: $name, type: vllm, url: \"$url\", models: [Qwen/Qwen3-0.6B]}"
  done <"$2"
  cat <<YAML
admin:
  auth:
    method: bearer_token
    token: replay
health_checks:
  interval: 5s
  timeout: 2s
logging:
  level: warn
YAML
  [ "$mode" = kv-aware ] || return 0
  cat <<YAML
dynamo:
  kv:
    pinned_artifacts: [$pins]
    artifact_cache_dir: "$work/$mode/artifacts"
  kv_cache_index:
    sources:
YAML
  while read -r name url endpoint replay; do
    echo "      - {backend: $name, transport: zmq, endpoint: \"$endpoint\", replay_endpoint: \"$replay\"}"
  done <"$2"
  cat <<YAML
    selection:
      models:
        - model: Qwen/Qwen3-0.6B
          tokenizer: {path: "$tokenizer", blake3: "$tokenizer_pin"}
          tokenizer_config: {path: "$tokenizer_config", blake3: "$tokenizer_config_pin"}
          block_size: 16
YAML
}

table=$work/table.md
echo "bench/vllm-replay.sh: $WORKERS vLLM servers, $KV_BLOCKS blocks each, utilisation $UTILISATION," \
  "speedup $SPEEDUP, kv fallback $KV_FALLBACK, modes: $MODES" >&2
echo "bench/vllm-replay.sh: load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for mode in $MODES; do
  echo "bench/vllm-replay.sh: $mode: load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  mkdir -p "$work/$mode"
  routed=true
  case $mode in
    kv-aware) args=(--mode kv-aware) ;;
    oracle | oracle-ttft | round-robin | bound) args=(--mode "$mode"); routed=false ;;
    *) args=(--mode load-only --label "$mode") ;;
  esac
  if $routed; then args+=(--router "http://127.0.0.1:$router_port" --admin-token replay); fi
  # shellcheck disable=SC2086
  start "replay-$mode" java $SIM_JAVA_OPTS $SIM_TOKEN_OPTS -jar "$SIM_JAR" replay --fleet vllm --trace "$trace" \
    --tokenizer "$tokenizer" --tokenizer-config "$tokenizer_config" --root "$work/$mode" \
    --frontend-port "$server_port" --workers "$WORKERS" --requests "$REQUESTS" --speedup "$SPEEDUP" \
    --utilisation "$UTILISATION" --kv-blocks "$KV_BLOCKS" --max-prompt-tokens "$MAX_PROMPT_TOKENS" \
    --out "$table.rows" "${args[@]}"
  if $routed; then
    # The servers list themselves once listening; the router is configured from that list.
    until [ -f "$work/$mode/servers.txt" ]; do
      kill -0 "${PID[replay-$mode]}" 2>/dev/null || { tail -20 "$work/replay-$mode.log" >&2; exit 1; }
      sleep 0.2
    done
    router_config "$mode" "$work/$mode/servers.txt" >"$work/$mode/router.yaml"
    # shellcheck disable=SC2086
    start "router-$mode" java $ROUTER_JAVA_OPTS -jar "$ROUTER_JAR" serve --config "$work/$mode/router.yaml"
  fi
  status=0
  wait "${PID[replay-$mode]}" || status=$?
  cat "$work/replay-$mode.log" >&2
  if [ "$mode" = kv-aware ] && [ $status -eq 0 ]; then
    # Every request counted once, by result (cached or uncached when the index chose, else the fallback's reason); the
    # render pool's turn-aways by lane and the prompt tokens by source (the prompt caches, or encoded).
    curl -s "http://127.0.0.1:$router_port/metrics" | grep -E '^(continuum_kv_cache_index_selections_total|continuum_dynamo_kv_render_pool_busy_total|continuum_dynamo_kv_prompt_tokens_total)\{' \
      | sed 's/^/kv-aware: /' | tee -a "$work/selections.txt" >&2
  fi
  if [ -n "${PID[router-$mode]:-}" ]; then
    kill "${PID[router-$mode]}" 2>/dev/null || true
    wait "${PID[router-$mode]}" 2>/dev/null || true
  fi
  [ $status -eq 0 ] || { echo "bench/vllm-replay.sh: $mode failed (exit $status)" >&2; tail -20 "$work/router-$mode.log" 2>/dev/null >&2; exit 1; }
done
replay_table "$table"
grep -h "prefill .* per uncached token" "$work"/replay-*.log | head -1
[ -f "$work/selections.txt" ] && cat "$work/selections.txt"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -z "${OUT:-}" ] || cp "$table" "$OUT"
