#!/usr/bin/env bash
# Event-bus benchmarks (docs/benchmarks.md, "Event bus"). Each is a JUnit class in router-app's tests that the suite
# does not run (its name does not end in Test), on EventBrokerEndToEndTest's fleet: the broker as its own OS process,
# fabric8's mock Kubernetes API server, JeroMQ kv_metrics publishers, the router's event bus in the test JVM.
#   relay     EventBusRelayBench: 10,000 msg/s for 20 s, delivery latency direct vs through the broker (p50/p99/max,
#             added p99), CPU per message of the router's bus and load threads and of the broker process
#   heap      EventBusHeapBench: 1,024 streams over 4 broker sessions, the router's heap after a full GC with every
#             stream open minus with none, per session against max_session_buffer_bytes
#   failover  EventBusFailoverBench: 20 trials of SIGKILL of the broker carrying every stream, time until all
#             subscriptions are connected on the surviving broker (min/median/max)
#
#   bench/event-bus.sh                         # all three
#   WHICH="failover" TRIALS=50 bench/event-bus.sh
#
# Knobs (environment): WHICH ("relay heap failover"), RATE (10000 messages/s), DURATION (20 s), PUBLISHERS (1024),
#   TRIALS (20), LEAK_DETECTION (relay only: Netty's leak detection in the router's JVM, "disabled"; the suite's
#   "paranoid" costs the relayed path several tracked buffers per message). Results are printed and left in
#   router-app/target/surefire-reports/*Bench-output.txt.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

WHICH=${WHICH:-"relay heap failover"}
for b in $WHICH; do
  case $b in
    relay) cls=EventBusRelayBench ;;
    heap) cls=EventBusHeapBench ;;
    failover) cls=EventBusFailoverBench ;;
    *) echo "unknown benchmark: $b (expected relay, heap or failover)" >&2; exit 2 ;;
  esac
  ./mvnw -B -ntp -o -q -pl router-app -am test -Dtest="$cls" -Dsurefire.failIfNoSpecifiedTests=false \
    -Drate="${RATE:-10000}" -Dseconds="${DURATION:-20}" -Dpublishers="${PUBLISHERS:-1024}" \
    -Dtrials="${TRIALS:-20}" -DleakDetection="${LEAK_DETECTION:-disabled}"
  grep -hE '^(relay|heap|failover|  )' "router-app/target/surefire-reports/dev.continuum.router.app.$cls-output.txt"
done
