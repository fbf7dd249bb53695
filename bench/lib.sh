# Shared by bench/run.sh and bench/ab.sh (sourced, not run): a scratch directory, the processes a script
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
