#!/usr/bin/env bash
# Side-by-side load benchmark: one fast upstream, several proxies in front of it on loopback, the same
# wrk load through each, alternating contenders, several rounds; prints one Markdown report.
#
#   bench/run.sh                                  # full run: about 25 minutes (18 with DURATION=5s)
#   DURATION=3s ROUNDS=1 CONNECTIONS="64" bench/run.sh   # quick development run
#   WRITE_DOCS=1 bench/run.sh                     # also writes the report into docs/benchmarks.md
#
# Contenders (CONTENDERS, space-separated, any subset; `direct` is always measured as the baseline):
#   direct         wrk straight to the upstream (the simulator's Netty OpenAI upstream)
#   router         the router, plain backend route (bench/config.yaml)
#   nginx          nginx proxy_pass, keep-alive upstream, proxy_buffering off (bench/side-nginx.conf)
#   haproxy        HAProxy, HTTP mode (bench/side-haproxy.cfg)
#   portkey        the Portkey gateway from the npm registry, OpenAI provider with a custom host
#   frontend       wrk straight to the simulator's direct-mode Dynamo frontend emulator (pins in headers)
#   router-dynamo  the router's pinned Dynamo path in front of that emulator (bench/side-router-dynamo.yaml)
# Knobs (environment): DURATION (8s) per measured run, ROUNDS (3), CONNECTIONS ("1 16 64 256"),
#   MODES ("buffered streaming"), CHUNKS (16 SSE events + [DONE] per stream), WARMUP (30s per contender
#   and mode), TTFB_SAMPLES (300 sequential streamed requests per contender), RATE_PHASE (1: the p99
#   run at half the router's peak rate), THREADS (wrk threads, 1), ROUTER_JAVA_OPTS (the router's JVM
#   flags, see docs/operations.md), PORTKEY_VERSION (1.15.2), BENCH_PORT_BASE (47000), WRITE_DOCS (0).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

DURATION=${DURATION:-8s}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-"1 16 64 256"}
CONTENDERS=${CONTENDERS:-"router nginx haproxy portkey frontend router-dynamo"}
MODES=${MODES:-"buffered streaming"}
CHUNKS=${CHUNKS:-16}
# 30 s: on 2 shared cores the router's JIT needs 20-30 s of load before its CPU per request settles (C2
# compiled for 40 % of the router's CPU in a streamed run measured after only 8 s; see docs/benchmarks.md).
WARMUP=${WARMUP:-30s}
TTFB_SAMPLES=${TTFB_SAMPLES:-300}
RATE_PHASE=${RATE_PHASE:-1}
THREADS=${THREADS:-1}
ROUTER_JAVA_OPTS=${ROUTER_JAVA_OPTS:-"-Xms128m -Xmx128m -XX:+UseParallelGC -XX:+ExitOnOutOfMemoryError"}
PORTKEY_VERSION=${PORTKEY_VERSION:-1.15.2}
WRITE_DOCS=${WRITE_DOCS:-0}
base=${BENCH_PORT_BASE:-47000}
export BENCH_UPSTREAM_PORT=$base BENCH_FRONTEND_PORT=$((base + 1)) BENCH_ROUTER_PORT=$((base + 80))
export BENCH_NGINX_PORT=$((base + 81)) BENCH_HAPROXY_PORT=$((base + 82)) BENCH_PORTKEY_PORT=$((base + 83))
export BENCH_ROUTER_DYNAMO_PORT=$((base + 90))
SIM_JAR=router-sim/target/continuum-sim.jar
ROUTER_JAR=${ROUTER_JAR:-router-app/target/continuum-router.jar}

has() { [[ " $CONTENDERS " == *" $1 "* ]]; }
missing=()
need() { command -v "$1" >/dev/null 2>&1 || missing+=("$1 ($2)"); }
need wrk "apt-get install wrk"
need curl "apt-get install curl"
need java "a JDK 17, e.g. apt-get install openjdk-17-jdk-headless"
need python3 "apt-get install python3"
has nginx && need nginx "apt-get install nginx-light"
has haproxy && need haproxy "apt-get install haproxy"
has portkey && { need node "Node.js 18 or newer, e.g. apt-get install nodejs npm"; need npm "apt-get install npm"; }
for jar in "$SIM_JAR" "$ROUTER_JAR"; do
  [ -f "$jar" ] || missing+=("$jar (./mvnw -B -ntp -q -DskipTests package)")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bench/run.sh: missing tools:" >&2
  printf '  %s\n' "${missing[@]}" >&2
  exit 1
fi

# shellcheck source=bench/lib.sh
. bench/lib.sh
require_free_ports bench/run.sh $BENCH_UPSTREAM_PORT $BENCH_FRONTEND_PORT $BENCH_ROUTER_PORT $BENCH_NGINX_PORT \
  $BENCH_HAPROXY_PORT $BENCH_PORTKEY_PORT $BENCH_ROUTER_DYNAMO_PORT

# --- the upstream and the contenders ------------------------------------------------------------------
start upstream java -Xms256m -Xmx256m -jar "$SIM_JAR" upstream --port "$BENCH_UPSTREAM_PORT" --chunks "$CHUNKS"
wait_http upstream "http://127.0.0.1:$BENCH_UPSTREAM_PORT/v1/models"

if has router; then
  # shellcheck disable=SC2086
  start router java $ROUTER_JAVA_OPTS -jar "$ROUTER_JAR" serve --config bench/config.yaml
fi
if has nginx; then
  mkdir -p "$work/nginx"
  sed -e "s#BENCH_DIR#$work/nginx#g" -e "s#BENCH_UPSTREAM_PORT#$BENCH_UPSTREAM_PORT#g" \
      -e "s#BENCH_NGINX_PORT#$BENCH_NGINX_PORT#g" bench/side-nginx.conf >"$work/nginx/nginx.conf"
  start nginx nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" -g 'daemon off;'
fi
if has haproxy; then
  sed -e "s#BENCH_THREADS#$(nproc)#g" -e "s#BENCH_UPSTREAM_PORT#$BENCH_UPSTREAM_PORT#g" \
      -e "s#BENCH_HAPROXY_PORT#$BENCH_HAPROXY_PORT#g" bench/side-haproxy.cfg >"$work/haproxy.cfg"
  start haproxy haproxy -db -f "$work/haproxy.cfg"
fi
if has portkey; then
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/continuum-bench/portkey-$PORTKEY_VERSION
  gateway=$cache/node_modules/@portkey-ai/gateway/build/start-server.js
  if [ ! -f "$gateway" ]; then
    echo "installing @portkey-ai/gateway@$PORTKEY_VERSION from the npm registry into $cache" >&2
    mkdir -p "$cache"
    npm install --silent --no-audit --no-fund --prefix "$cache" "@portkey-ai/gateway@$PORTKEY_VERSION" >&2
  fi
  # node itself (not npx) so that the measured PID is the gateway's; production mode, no UI.
  NODE_ENV=production start portkey node --require "$PWD/bench/node-loopback.cjs" "$gateway" \
    --port="$BENCH_PORTKEY_PORT" --headless
fi
if has frontend || has router-dynamo; then
  export BENCH_DYNAMO_ROOT=$work/dynamo-store
  mkdir -p "$BENCH_DYNAMO_ROOT"
  start fleet java -Xms256m -Xmx256m -jar "$SIM_JAR" fleet --root "$BENCH_DYNAMO_ROOT" --prefill 1 --decode 1 \
    --port "$BENCH_FRONTEND_PORT" --chunks "$CHUNKS" --chunk-delay-ms 0
  wait_http fleet "http://127.0.0.1:$BENCH_FRONTEND_PORT/"
  PID[frontend]=${PID[fleet]}
  for _ in $(seq 1 50); do grep -q 'kv_metrics' "$work/fleet.log" && [ "$(grep -c kv_metrics "$work/fleet.log")" -ge 2 ] && break; sleep 0.2; done
  # The fleet prints one line per worker: #index, name, namespace, role, dp=N, decimal ID, (hex ID), ...
  prefill_id=$(awk '$4 == "prefill" && /kv_metrics/ {print $6; exit}' "$work/fleet.log")
  decode_id=$(awk '($4 == "decode" || $4 == "aggregated") && /kv_metrics/ {print $6; exit}' "$work/fleet.log")
  [ -n "$prefill_id" ] && [ -n "$decode_id" ] || { echo "fleet: no worker IDs in its log" >&2; cat "$work/fleet.log" >&2; exit 1; }
  if has router-dynamo; then
    # shellcheck disable=SC2086
    start router-dynamo java $ROUTER_JAVA_OPTS -jar "$ROUTER_JAR" serve --config bench/side-router-dynamo.yaml
  fi
fi

url() {
  case $1 in
    direct) echo "http://127.0.0.1:$BENCH_UPSTREAM_PORT/v1/chat/completions" ;;
    router) echo "http://127.0.0.1:$BENCH_ROUTER_PORT/v1/chat/completions" ;;
    nginx) echo "http://127.0.0.1:$BENCH_NGINX_PORT/v1/chat/completions" ;;
    haproxy) echo "http://127.0.0.1:$BENCH_HAPROXY_PORT/v1/chat/completions" ;;
    portkey) echo "http://127.0.0.1:$BENCH_PORTKEY_PORT/v1/chat/completions" ;;
    frontend) echo "http://127.0.0.1:$BENCH_FRONTEND_PORT/v1/chat/completions" ;;
    router-dynamo) echo "http://127.0.0.1:$BENCH_ROUTER_DYNAMO_PORT/v1/chat/completions" ;;
  esac
}
headers() {
  case $1 in
    portkey) echo "x-portkey-provider: openai|x-portkey-custom-host: http://127.0.0.1:$BENCH_UPSTREAM_PORT/v1|Authorization: Bearer bench" ;;
    frontend) echo "x-dynamo-worker-instance-id: $decode_id|x-dynamo-prefill-instance-id: $prefill_id" ;;
    *) echo "" ;;
  esac
}
hdr_args() { # fills HDR with curl -H arguments for contender $1
  HDR=()
  local h IFS='|'
  for h in $(headers "$1"); do HDR+=(-H "$h"); done
}
contenders="direct $CONTENDERS"
no_stream=""
notes=()
for c in $contenders; do
  hdr_args "$c"
  ok=0
  for _ in $(seq 1 150); do
    code=$(curl -s -o "$work/check-$c.out" -w '%{http_code}' -H 'Content-Type: application/json' "${HDR[@]}" \
      -d '{"model":"demo-model","messages":[{"role":"user","content":"hi"}]}' "$(url "$c")" || true)
    [ "$code" = 200 ] && { ok=1; break; }
    sleep 0.2
  done
  if [ $ok = 0 ]; then
    echo "$c: no 200 answer (last status $code): $(head -c 300 "$work/check-$c.out")" >&2
    [ -n "${PID[$c]:-}" ] && tail -20 "$work/$c.log" >&2
    exit 1
  fi
  if [[ " $MODES " == *" streaming "* ]]; then
    code=$(curl -s -o "$work/check-stream-$c.out" -w '%{http_code}' -H 'Content-Type: application/json' "${HDR[@]}" \
      -d '{"model":"demo-model","stream":true,"messages":[{"role":"user","content":"hi"}]}' "$(url "$c")" || true)
    if [ "$code" != 200 ] || ! grep -q '\[DONE\]' "$work/check-stream-$c.out"; then
      no_stream+=" $c"
      note="$c: streamed requests fail (status $code: $(head -c 120 "$work/check-stream-$c.out" | tr -d '\n'))"
      [ -n "${PID[$c]:-}" ] && note+="; its log says: $(grep -m1 -o '[A-Za-z]*Error: [^ ]*' "$work/$c.log" || true)"
      notes+=("$note; streaming not measured")
      echo "warning: ${notes[-1]}" >&2
    fi
  fi
done

# --- measurement helpers --------------------------------------------------------------------------------
hz=$(getconf CLK_TCK)
pids_of() { # the contender's process and its children (nginx workers)
  local p=${PID[$1]:-}
  [ -n "$p" ] || return 0
  echo "$p"
  pgrep -P "$p" || true
}
cpu_ticks() { local t=0 p; for p in $(pids_of "$1"); do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo $t; }
status_kib() { # contender field: VmRSS or VmHWM summed over its processes, KiB
  local t=0 p
  for p in $(pids_of "$1"); do t=$((t + $(awk -v f="$2:" '$1 == f {print $2}' "/proc/$p/status" 2>/dev/null || echo 0))); done
  echo $t
}
results=$work/results.tsv
printf 'round\tcontender\tmode\tconns\tdelay_ms\trequests\tduration_us\tp50_us\tp99_us\tp999_us\terrors\tcpu_s\tupstream_cpu_s\trss_max_kib\thwm_kib\n' >"$results"

wrk_run() { # contender mode conns duration delay_ms -> wrk's RESULT line
  local threads=$THREADS
  [ "$3" -lt "$threads" ] && threads=$3
  hdr_args "$1"
  local IFS='|' extra
  extra=$(headers "$1")
  BODY_STREAM=$([ "$2" = streaming ] && echo 1 || echo 0) EXTRA_HEADERS="$extra" DELAY_MS="$5" \
    wrk -t"$threads" -c"$3" -d"$4" --timeout 10s -s bench/side.lua "$(url "$1")" | grep '^RESULT' || true
}
measure() { # round contender mode conns delay_ms
  local c=$2 c0 c1 u0 u1 out sampler rss_file=$work/rss.$$
  c0=$(cpu_ticks "$c"); u0=$(cpu_ticks upstream)
  echo 0 >"$rss_file"
  if [ -n "${PID[$c]:-}" ]; then
    ( max=0; while sleep 0.5; do r=$(status_kib "$c" VmRSS); [ "$r" -gt "$max" ] && max=$r && echo $max >"$rss_file.tmp" && mv "$rss_file.tmp" "$rss_file"; done ) &
    sampler=$!
  fi
  out=$(wrk_run "$c" "$3" "$4" "$DURATION" "$5")
  [ -n "${sampler:-}" ] && { kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true; }
  c1=$(cpu_ticks "$c"); u1=$(cpu_ticks upstream)
  [ -n "$out" ] || { echo "round $1 $c $3 c=$4: wrk printed no result" >&2; return 0; }
  eval "$(sed -e 's/^RESULT //' -e 's/ /;/g' <<<"$out")"
  local errors=$((err_connect + err_read + err_write + err_status + err_timeout))
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$c" "$3" "$4" "${5:-0}" \
    "$requests" "$duration_us" "$p50_us" "$p99_us" "$p999_us" "$errors" \
    "$(awk -v t=$((c1 - c0)) -v hz="$hz" 'BEGIN {printf "%.3f", t / hz}')" \
    "$(awk -v t=$((u1 - u0)) -v hz="$hz" 'BEGIN {printf "%.3f", t / hz}')" \
    "$(cat "$rss_file")" "$(status_kib "$c" VmHWM)" >>"$results"
  printf '  round %s %-13s %-9s c=%-3s %s: %s req, p50 %s us, p99 %s us, %s errors\n' "$1" "$c" "$3" "$4" \
    "${5:+delay ${5}ms}" "$requests" "$p50_us" "$p99_us" "$errors" >&2
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started_at=$(date -u '+%Y-%m-%d %H:%M UTC')
echo "contenders: $contenders; modes: $MODES; connections: $CONNECTIONS; $ROUNDS rounds of $DURATION; load average $load_before" >&2

# --- warm-up (JIT, pools, keep-alive connections), then the rounds, rotating the contender order -------------
for c in $contenders; do
  for m in $MODES; do
    [ "$m" = streaming ] && [[ " $no_stream " == *" $c "* ]] && continue
    BODY_STREAM=$([ "$m" = streaming ] && echo 1 || echo 0) EXTRA_HEADERS="$(headers "$c")" \
      wrk -t"$THREADS" -c64 -d"$WARMUP" --timeout 10s -s bench/side.lua "$(url "$c")" >/dev/null
  done
done
read -r -a order <<<"$contenders"
n=${#order[@]}
for r in $(seq 1 "$ROUNDS"); do
  for conns in $CONNECTIONS; do
    for m in $MODES; do
      for i in $(seq 0 $((n - 1))); do
        [ "$m" = streaming ] && [[ " $no_stream " == *" ${order[$(((i + r - 1) % n))]} "* ]] && continue
        measure "$r" "${order[$(((i + r - 1) % n))]}" "$m" "$conns" ""
      done
    done
  done
done

# --- p99 at about half the router's peak rate: wrk's delay() hook, C connections x 1000 / D ms ------------
rate_note=""
if [ "$RATE_PHASE" = 1 ] && has router && [[ " $MODES " == *" buffered "* ]]; then
  peak=$(awk -F'\t' '$2 == "router" && $3 == "buffered" && $5 == 0 {r = $6 * 1e6 / $7; if (r > m) m = r} END {printf "%d", m}' "$results")
  delay=2
  rate_conns=$(awk -v p="$peak" -v d=$delay 'BEGIN {c = int(p / 2 * d / 1000 + 0.5); print (c < 1 ? 1 : c)}')
  rate_note="offered load: $rate_conns connections, each waiting ${delay} ms after every answer (at most $((rate_conns * 1000 / delay)) requests/s; router peak $peak requests/s)"
  echo "rate phase: $rate_note" >&2
  rate_set="direct router"
  for c in nginx haproxy; do has "$c" && rate_set+=" $c"; done
  read -r -a rate_order <<<"$rate_set"
  for r in $(seq 1 "$ROUNDS"); do
    for i in $(seq 0 $((${#rate_order[@]} - 1))); do
      measure "$r" "${rate_order[$(((i + r - 1) % ${#rate_order[@]}))]}" buffered "$rate_conns" "$delay"
    done
  done
fi

# --- time to first byte: sequential streamed requests on one kept-alive connection, per contender ---------
if [[ " $MODES " == *" streaming "* ]]; then
  for c in $contenders; do
    [[ " $no_stream " == *" $c "* ]] && continue
    hdr_args "$c"
    args=()
    for _ in $(seq 1 "$TTFB_SAMPLES"); do args+=(-o /dev/null "$(url "$c")"); done
    curl -s -w '%{time_starttransfer} %{time_total}\n' -H 'Content-Type: application/json' "${HDR[@]}" \
      -d '{"model":"demo-model","stream":true,"messages":[{"role":"user","content":"hi"}]}' "${args[@]}" \
      >"$work/ttfb-$c.txt"
  done
fi

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
cmd="bench/run.sh"
for v in DURATION ROUNDS CONNECTIONS CONTENDERS MODES CHUNKS; do
  [ -n "${!v+x}" ] && [ -n "$(printenv "$v" || true)" ] && cmd="$v=\"${!v}\" $cmd"
done
machine="$(nproc) cores ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $( (. /etc/os-release && echo "$PRETTY_NAME") ), kernel $(uname -r)"
versions="$(java -version 2>&1 | head -1 | sed 's/"//g'); wrk $( { wrk -v 2>&1 || true; } | awk 'NR == 1 {print $2}')"
has nginx && versions+="; $(nginx -v 2>&1 | sed 's#nginx version: ##')"
has haproxy && versions+="; HAProxy $(haproxy -v | awk 'NR == 1 {print $3}')"
has portkey && versions+="; Portkey gateway $PORTKEY_VERSION on Node.js $(node --version)"
python3 bench/side-report.py --results "$results" --ttfb-dir "$work" --chunks "$CHUNKS" \
  --command "$cmd" --date "$started_at" --machine "$machine" --versions "$versions" \
  --load "$load_before before, $load_after after" --router-opts "$ROUTER_JAVA_OPTS" \
  --settings "$ROUNDS rounds of $DURATION per contender, mode and connection count, wrk -t$THREADS, warm-up $WARMUP at 64 connections per contender and mode" \
  --rate-note "$rate_note" --notes "$(printf '%s\n' "${notes[@]}")" >"$work/report.md"
cat "$work/report.md"
if [ "$WRITE_DOCS" = 1 ]; then
  python3 bench/side-report.py --write-docs docs/benchmarks.md --report "$work/report.md"
  echo "wrote the report into docs/benchmarks.md" >&2
fi
