#!/usr/bin/env bash
# The dynamo-direct-shim setup on one machine, the simulator standing in for Dynamo: a local etcd, a
# simulated fleet (2 prefill + 2 decode workers registered in etcd, each publishing kv_metrics over ZMQ, and
# a `dynamo.frontend --router-mode direct` emulator), and the router on config.yaml. Needs etcd (Debian's
# etcd-server) and the built jars (./mvnw -q -DskipTests package). Ctrl-C stops everything.
#
#   deploy/examples/dynamo-direct-shim/run.sh
#   curl -s localhost:8080/v1/chat/completions -H 'content-type: application/json' \
#     -d '{"model":"demo-model","messages":[{"role":"user","content":"hi"}]}' -D - | grep -i x-continuum
#   curl -s -H "Authorization: Bearer $(cat "${TMPDIR:-/tmp}"/continuum-example/admin-token)" \
#     localhost:8080/admin/dynamo/workers
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
export ROUTER_PORT=${ROUTER_PORT:-8080} FRONTEND_PORT=${FRONTEND_PORT:-8001} ETCD_PORT=${ETCD_PORT:-2379}
work="${TMPDIR:-/tmp}/continuum-example"
mkdir -p "$work"
if [ -z "${CONTINUUM_ADMIN_TOKEN:-}" ]; then
  CONTINUUM_ADMIN_TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
fi
export CONTINUUM_ADMIN_TOKEN
printf '%s' "$CONTINUUM_ADMIN_TOKEN" > "$work/admin-token"

for jar in router-app/target/continuum-router.jar router-sim/target/continuum-sim.jar; do
  [ -f "$repo/$jar" ] || (cd "$repo" && ./mvnw -q -B -ntp -DskipTests package)
done

pids=()
# Newest first: the router drains, then the fleet withdraws its registrations while etcd still answers.
stop() {
  trap - EXIT INT TERM
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill -TERM "${pids[i]}" 2>/dev/null || true
    wait "${pids[i]}" 2>/dev/null || true
  done
}
trap stop EXIT INT TERM
rm -rf "$work/etcd"   # a fresh store: no registrations left from an earlier run
etcd --data-dir "$work/etcd" --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" --listen-peer-urls http://127.0.0.1:0 \
  >"$work/etcd.log" 2>&1 &
pids+=($!)
until etcdctl --endpoints "http://127.0.0.1:$ETCD_PORT" endpoint health >/dev/null 2>&1; do sleep 0.2; done

java -jar "$repo/router-sim/target/continuum-sim.jar" fleet --etcd "http://127.0.0.1:$ETCD_PORT" \
  --namespace dynamo --model demo-model --prefill 2 --decode 2 --port "$FRONTEND_PORT" >"$work/fleet.log" 2>&1 &
pids+=($!)

java -jar "$repo/router-app/target/continuum-router.jar" serve --config "$here/config.yaml" &
pids+=($!)
echo "router on http://127.0.0.1:$ROUTER_PORT (admin token in $work/admin-token; logs of etcd and the fleet in $work)"
wait "${pids[-1]}"
