#!/usr/bin/env bash
# Live check of the event-bus broker tunnel (docs/event-bus.md, "Live check of the broker tunnel"); read-only but
# for the optional probe Pod of step 3.
#
#   ROUTER_ADMIN_TOKEN=... scripts/dynamo-broker-live-check.sh --router-url https://router.example:8080 \
#       [--context CTX] [--namespace BROKER_NS] [--window 300 | --once] [--max-staleness-ms 3000] \
#       [--probe-image curlimages/curl:8.11.1 --bus-url https://router.example:7443]
#
# Steps, in order; the first failing step ends the run and the later ones are not run:
#   1 the brokers reach the bus: every subscription of GET /admin/dynamo/workers is connected over
#     transport broker, every broker_coverage namespace is covered with nothing pending, the listener has
#     welcomed sessions (continuum_dynamo_event_bus_sessions); with --namespace, the broker Pods are Running
#     and Ready (kubectl get --raw, read-only);
#   2 samples stay fresh: /metrics once per second for --window seconds (default 60; --once is --window 1,
#     two scrapes a second apart): kv_metrics samples applied and kv-events decoded, the longest stretch
#     without an applied kv_metrics sample against --max-staleness-ms (default 3000), and the share of decode
#     selections by reason="load" (and kv_aware) against reason="round_robin_stale", which fails the step;
#   3 relay latency (only with --probe-image): a temporary non-root Pod in the broker namespace times TCP and
#     TLS handshakes to --bus-url; half the median TCP connect time estimates the one-way latency.
#
# Exit status: 0 every step run passed; 1, 2, 3 the step that failed; 4 the router could not be read (no
# answer, a non-200 admin or metrics answer, or one that does not parse); 64 usage; 69 a required command is
# missing.
# Needs bash, curl and python3; kubectl only with --namespace or --probe-image. The admin token is read from
# ROUTER_ADMIN_TOKEN and handed to curl on its standard input, never on a command line or in the output.
# Other options: --selector (broker Pods, default app.kubernetes.io/name=continuum-event-broker), --metrics-path,
# --cacert (the router's CA), --timeout (per request, default 10 s), --probes (handshakes, default 10).
set -euo pipefail

usage() {
    sed -n '2,/^set -euo pipefail$/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
}

die_usage() {
    echo "error: $*" >&2
    exit 64
}

context=""
namespace=""
router_url=""
window=60
max_staleness_ms=3000
probe_image=""
bus_url=""
metrics_path="/metrics"
selector="app.kubernetes.io/name=continuum-event-broker"
cacert=""
probe_count=10
http_timeout=10

while [ $# -gt 0 ]; do
    case "$1" in
        --context) context="${2-}"; shift 2 || die_usage "--context needs a value" ;;
        --namespace) namespace="${2-}"; shift 2 || die_usage "--namespace needs a value" ;;
        --router-url) router_url="${2-}"; shift 2 || die_usage "--router-url needs a value" ;;
        --window) window="${2-}"; shift 2 || die_usage "--window needs a value" ;;
        --once) window=1; shift ;;
        --max-staleness-ms) max_staleness_ms="${2-}"; shift 2 || die_usage "--max-staleness-ms needs a value" ;;
        --probe-image) probe_image="${2-}"; shift 2 || die_usage "--probe-image needs a value" ;;
        --bus-url) bus_url="${2-}"; shift 2 || die_usage "--bus-url needs a value" ;;
        --metrics-path) metrics_path="${2-}"; shift 2 || die_usage "--metrics-path needs a value" ;;
        --selector) selector="${2-}"; shift 2 || die_usage "--selector needs a value" ;;
        --cacert) cacert="${2-}"; shift 2 || die_usage "--cacert needs a value" ;;
        --probes) probe_count="${2-}"; shift 2 || die_usage "--probes needs a value" ;;
        --timeout) http_timeout="${2-}"; shift 2 || die_usage "--timeout needs a value" ;;
        -h|--help) usage ;;
        *) die_usage "unknown argument: $1 (see --help)" ;;
    esac
done

[ -n "$router_url" ] || die_usage "--router-url is required"
case "${ROUTER_ADMIN_TOKEN:-}$router_url" in *$'\n'*|*$'\r'*) die_usage "ROUTER_ADMIN_TOKEN and --router-url must be one line" ;; esac
case "$router_url" in http://*|https://*) ;; *) die_usage "--router-url must be http:// or https://" ;; esac
router_url="${router_url%/}"
is_uint() { case "$1" in ''|*[!0-9]*) return 1 ;; *) return 0 ;; esac; }
is_uint "$window" && [ "$window" -ge 1 ] && [ "$window" -le 86400 ] || die_usage "--window must be 1..86400 seconds"
is_uint "$max_staleness_ms" && [ "$max_staleness_ms" -ge 1 ] || die_usage "--max-staleness-ms must be a positive integer"
is_uint "$probe_count" && [ "$probe_count" -ge 1 ] && [ "$probe_count" -le 100 ] || die_usage "--probes must be 1..100"
is_uint "$http_timeout" && [ "$http_timeout" -ge 1 ] && [ "$http_timeout" -le 120 ] || die_usage "--timeout must be 1..120 seconds"
case "$metrics_path" in /*) ;; *) die_usage "--metrics-path must start with /" ;; esac
if [ -n "$probe_image" ]; then
    [ -n "$namespace" ] || die_usage "--probe-image needs --namespace (the Pod runs in the broker namespace)"
    case "$bus_url" in https://*) ;; *) die_usage "--probe-image needs --bus-url https://host:port" ;; esac
fi
[ -z "$cacert" ] || [ -r "$cacert" ] || die_usage "--cacert $cacert is not readable"

for tool in curl python3; do
    command -v "$tool" >/dev/null 2>&1 || { echo "error: $tool is required" >&2; exit 69; }
done
if [ -n "$namespace" ] || [ -n "$probe_image" ]; then
    command -v kubectl >/dev/null 2>&1 || { echo "error: kubectl is required with --namespace or --probe-image" >&2; exit 69; }
fi

tmp=$(mktemp -d)
export PYTHONPATH="$tmp"   # prom.py, the shared Prometheus text parser
probe_pod=""
cleanup() {
    if [ -n "$probe_pod" ]; then
        kubectl_ delete pod "$probe_pod" --ignore-not-found --wait=false >/dev/null 2>&1 || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

kubectl_() {
    if [ -n "$context" ]; then
        kubectl --context "$context" --request-timeout="${http_timeout}s" -n "$namespace" "$@"
    else
        kubectl --request-timeout="${http_timeout}s" -n "$namespace" "$@"
    fi
}

# Wall-clock nanoseconds: bash 5's EPOCHREALTIME, else GNU date (BSD date has no %N, so python3 there).
now_ns() {
    if [ -n "${EPOCHREALTIME:-}" ]; then
        local t="${EPOCHREALTIME/[.,]/}"
        printf '%s000' "$t"
    else
        local t
        t=$(date +%s%N)
        case "$t" in *[!0-9]*) python3 -c 'import time; print(time.time_ns())' ;; *) printf '%s' "$t" ;; esac
    fi
}

# Percent-encodes everything but RFC 3986's unreserved characters.
urlencode() {
    local LC_ALL=C s="$1" out="" c i
    for ((i = 0; i < ${#s}; i++)); do
        c="${s:i:1}"
        case "$c" in
            [A-Za-z0-9._~-]) out+="$c" ;;
            *) out+=$(printf '%%%02X' "'$c") ;;
        esac
    done
    printf '%s' "$out"
}

# GET a router path into a file; prints the HTTP status (000 when there was no answer). The token travels in
# a curl config read from stdin, so it never appears in the process list.
router_get() {
    local path="$1" out="$2"
    local args=(-sS -o "$out" -w '%{http_code}' --connect-timeout 5 --max-time "$http_timeout" -K -)
    [ -z "$cacert" ] || args+=(--cacert "$cacert")
    {
        if [ -n "${ROUTER_ADMIN_TOKEN:-}" ]; then
            printf 'header = "Authorization: Bearer %s"\n' "$(curl_quote "$ROUTER_ADMIN_TOKEN")"
        fi
        printf 'url = "%s"\n' "$(curl_quote "$router_url$path")"
    } | curl "${args[@]}" 2>"$tmp/curl.err" || true
}

# Escapes a value for a double-quoted string of a curl config file.
curl_quote() {
    local v="${1//\\/\\\\}"
    printf '%s' "${v//\"/\\\"}"
}

fetch_or_exit() {
    local path="$1" out="$2" code hint
    code=$(router_get "$path" "$out")
    if [ "$code" != "200" ]; then
        if [ "$code" = "000" ]; then
            echo "error: GET $path: no answer from the router ($(head -c 200 "$tmp/curl.err" | tr '\n' ' '))" >&2
        else
            case "$code" in
                401) hint="a missing or wrong ROUTER_ADMIN_TOKEN" ;;
                404) hint="without an admin section every /admin/ path is 404; or a different --metrics-path" ;;
                *) hint="see the router's log" ;;
            esac
            echo "error: GET $path answered $code ($hint)" >&2
        fi
        echo "result: FAIL (the router could not be read)"
        exit 4
    fi
}

# A parser failed on what the router answered: not a step's verdict, so not a step's exit status.
internal_error() {
    echo "error: could not parse $1" >&2
    echo "result: FAIL (the router could not be read)"
    exit 4
}

step_fail() {
    local step="$1"
    local last=3
    local s
    for s in $(seq $((step + 1)) "$last"); do
        echo "step $s: SKIP (step $step failed)"
    done
    echo "result: FAIL (step $step)"
    exit "$step"
}

# Prometheus text parsing shared by the steps (the python3 snippets below import it).
cat >"$tmp/prom.py" <<'PY'
import re, sys
LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')

def parse_line(line):
    """(name, labels, value) of one sample line; None for comments and anything unparsable."""
    if line.startswith("#"):
        return None
    m = LINE.match(line)
    if not m:
        return None
    try:
        value = float(m.group(3))
    except ValueError:
        return None
    return m.group(1), dict(LABEL.findall(m.group(2) or "")), value

def samples(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            sample = parse_line(line)
            if sample:
                yield sample

def total(path, name, **want):
    out, seen = 0.0, False
    for n, labels, value in samples(path):
        if n == name and all(labels.get(k) == v for k, v in want.items()):
            out += value
            seen = True
    return out if seen else None
PY

# ---- step 1: the brokers reach the bus -------------------------------------------------------------------
fetch_or_exit /admin/dynamo/workers "$tmp/workers.json"
fetch_or_exit "$metrics_path" "$tmp/metrics.0"
set +e
python3 - "$tmp/workers.json" "$tmp/metrics.0" >"$tmp/step1.out" <<'PY'
import json, sys
from prom import samples, total
workers = json.load(open(sys.argv[1], encoding="utf-8"))
metrics = sys.argv[2]
problems, details = [], []
if not workers.get("enabled"):
    problems.append("Dynamo discovery is off (enabled: false)")
subs = workers.get("subscriptions") or []
if not subs:
    problems.append("no subscriptions: discovery sees no kv_metrics or kv-events publisher")
by_state = {}
for s in subs:
    key = (s.get("family"), s.get("state"), s.get("transport"))
    by_state[key] = by_state.get(key, 0) + 1
    if s.get("state") != "connected" or s.get("transport") != "broker":
        problems.append("subscription %s publisher %s in %s: state %s, transport %s" % (
            s.get("family"), s.get("publisher_id"), s.get("namespace"), s.get("state"), s.get("transport")))
for (family, state, transport), n in sorted(by_state.items(), key=str):
    details.append("subscriptions %s %s over %s: %d" % (family, state, transport, n))
carriers = {}
for s in subs:
    if s.get("broker"):
        carriers[s["broker"]] = carriers.get(s["broker"], 0) + 1
for broker, n in sorted(carriers.items()):
    details.append("broker %s carries %d subscriptions" % (broker, n))
coverage = workers.get("broker_coverage")
if coverage is None:
    problems.append("broker_coverage is null: the router runs dynamo.load.transport: direct")
else:
    for c in coverage:
        details.append("namespace %s: %s, %d pending" % (c.get("namespace"),
                       "covered by [%s]" % ", ".join(c.get("brokers") or []) if c.get("covered") else "not covered",
                       c.get("pending_subscriptions") or 0))
        if not c.get("covered"):
            problems.append("namespace %s is not covered by any live broker session" % c.get("namespace"))
        if c.get("pending_subscriptions"):
            problems.append("namespace %s has %d pending subscriptions" % (c.get("namespace"),
                            c.get("pending_subscriptions")))
sessions = total(metrics, "continuum_dynamo_event_bus_sessions")
if sessions is None:
    problems.append("continuum_dynamo_event_bus_sessions is not exported: the event bus listener is not running")
else:
    details.append("continuum_dynamo_event_bus_sessions %d" % sessions)
    if sessions < 1:
        problems.append("the event bus listener has no welcomed session")
for n, labels, value in samples(metrics):
    if n == "continuum_dynamo_broker_namespace_sessions":
        details.append("continuum_dynamo_broker_namespace_sessions{namespace=%s} %d" % (labels.get("namespace"), value))
summary = "%d subscriptions connected over transport broker" % len(subs) if not problems else \
    "%d problem(s)" % len(problems)
print("PASS" if not problems else "FAIL")
print(summary)
for p in problems:
    print("  problem: " + p)
for d in details:
    print("  " + d)
PY
rc=$?
set -e
if [ $rc -ne 0 ] || [ ! -s "$tmp/step1.out" ]; then
    echo "error: could not parse the admin answer" >&2
    echo "result: FAIL (the router could not be read)"
    exit 4
fi
verdict=$(head -n1 "$tmp/step1.out")
pods_ok=1
if [ -n "$namespace" ]; then
    enc_selector=$(urlencode "$selector")
    ns_path=$(urlencode "$namespace")
    if kubectl_ get --raw "/api/v1/namespaces/$ns_path/pods?labelSelector=$enc_selector" >"$tmp/pods.json" 2>"$tmp/kubectl.err"; then
        python3 - "$tmp/pods.json" "$selector" "$namespace" >"$tmp/pods.out" <<'PY' || pods_ok=0
import json, sys
pods = json.load(open(sys.argv[1], encoding="utf-8")).get("items") or []
bad = 0
if not pods:
    print("  problem: no Pod matches %s in namespace %s" % (sys.argv[2], sys.argv[3]))
    sys.exit(1)
for p in pods:
    name = p.get("metadata", {}).get("name")
    status = p.get("status") or {}
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
    restarts = sum(int(c.get("restartCount") or 0) for c in status.get("containerStatuses") or [])
    line = "pod %s: phase %s, %s, restarts %d" % (name, status.get("phase"), "ready" if ready else "not ready",
                                                  restarts)
    if status.get("phase") != "Running" or not ready:
        bad += 1
        print("  problem: " + line)
    else:
        print("  " + line)
sys.exit(1 if bad else 0)
PY
    else
        pods_ok=0
        echo "  problem: kubectl could not list the broker Pods: $(head -c 300 "$tmp/kubectl.err" | tr '\n' ' ')" >"$tmp/pods.out"
    fi
fi
if [ "$verdict" = PASS ] && [ "$pods_ok" = 1 ]; then
    echo "step 1 (brokers reach the bus): PASS - $(sed -n 2p "$tmp/step1.out")"
else
    echo "step 1 (brokers reach the bus): FAIL - $(sed -n 2p "$tmp/step1.out")$([ "$pods_ok" = 1 ] || echo '; broker Pods not all Running and Ready')"
fi
tail -n +3 "$tmp/step1.out"
[ -z "$namespace" ] || cat "$tmp/pods.out"
[ "$verdict" = PASS ] && [ "$pods_ok" = 1 ] || step_fail 1

# ---- step 2: samples stay fresh --------------------------------------------------------------------------
# Only the three families this step reads are kept from each scrape (a big fleet's page is large), and all
# are parsed once at the end.
families='^(continuum_dynamo_load_events_total|continuum_dynamo_kv_events_total|continuum_dynamo_selection_total)[{ ]'
start_ns=$(now_ns)
i=0
while :; do
    now_ns=$(now_ns)
    fetch_or_exit "$metrics_path" "$tmp/scrape"
    { echo "# at $now_ns"; grep -E "$families" "$tmp/scrape" || true; } >>"$tmp/series.prom"
    i=$((i + 1))
    [ "$i" -le "$window" ] || break
    # Scrape i is due i seconds after the first, however long each one took.
    next_ns=$((start_ns + i * 1000000000))
    now_ns=$(now_ns)
    if [ "$next_ns" -gt "$now_ns" ]; then
        sleep "$(printf '%d.%09d' $(((next_ns - now_ns) / 1000000000)) $(((next_ns - now_ns) % 1000000000)))"
    fi
done
python3 - "$tmp/series.prom" "$max_staleness_ms" >"$tmp/step2.out" <<'PY' || internal_error "step 2's scrapes"
import sys
from prom import parse_line

def row(at, lines):
    def total(name, **want):
        out, seen = 0.0, False
        for n, labels, value in lines:
            if n == name and all(labels.get(k) == v for k, v in want.items()):
                out, seen = out + value, True
        return out if seen else -1
    kv = total("continuum_dynamo_kv_events_total")
    bad = max(0, total("continuum_dynamo_kv_events_total", result="malformed")) + \
          max(0, total("continuum_dynamo_kv_events_total", result="oversized"))
    return [at, total("continuum_dynamo_load_events_total", result="applied"), -1 if kv < 0 else kv - bad,
            total("continuum_dynamo_selection_total", role="decode", reason="load"),
            total("continuum_dynamo_selection_total", role="decode", reason="round_robin_stale"),
            total("continuum_dynamo_selection_total", role="decode"),
            total("continuum_dynamo_selection_total", role="decode", reason="kv_aware")]

rows, at, lines = [], None, []
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    if line.startswith("# at "):
        if at is not None:
            rows.append(row(at, lines))
        at, lines = float(line[5:]), []
    else:
        sample = parse_line(line)
        if sample:
            lines.append(sample)
rows.append(row(at, lines))
limit_ms = int(sys.argv[2])
problems, details = [], []
t = [r[0] / 1e6 for r in rows]          # ms
applied = [r[1] for r in rows]
if applied[0] < 0:
    problems.append("continuum_dynamo_load_events_total is not exported (is Dynamo discovery on?)")
frames = applied[-1] - applied[0] if applied[0] >= 0 else 0
kv_events = rows[-1][2] - rows[0][2] if rows[0][2] >= 0 else None
details.append("scrapes %d over %.1f s" % (len(rows), (t[-1] - t[0]) / 1000))
details.append("kv_metrics samples applied %d (%.1f/s)" % (frames, frames * 1000 / max(1.0, t[-1] - t[0])))
details.append("kv-events decoded %s" % ("not exported (dynamo.kv.enabled off)" if kv_events is None
                                         else "%d" % kv_events))
# The longest stretch without a new applied sample, at the scrapes' 1 s resolution: from the window's start
# to the first scrape that saw the counter rise, between such scrapes, and from the last one to the end.
marks = [t[0]] + [t[k] for k in range(1, len(rows)) if applied[k] > applied[k - 1]] + [t[-1]]
gap = max(b - a for a, b in zip(marks, marks[1:])) if len(marks) > 1 else 0
details.append("longest gap between applied kv_metrics samples %d ms (limit %d ms, 1 s resolution)" % (gap, limit_ms))
if frames <= 0:
    problems.append("no kv_metrics sample was applied in the window")
elif gap > limit_ms:
    problems.append("no kv_metrics sample for %d ms, more than --max-staleness-ms %d" % (gap, limit_ms))
load = rows[-1][3] - rows[0][3]
stale = rows[-1][4] - rows[0][4]
decode = rows[-1][5] - rows[0][5]
if decode <= 0:
    details.append("decode selections 0 in the window (no traffic): selection share not measured")
else:
    kv_aware = max(0, rows[-1][6]) - max(0, rows[0][6])
    details.append("decode selections %d: load %.1f%%, kv_aware %.1f%%, round_robin_stale %.1f%%, other %.1f%%" % (
        decode, 100 * load / decode, 100 * kv_aware / decode, 100 * stale / decode,
        100 * (decode - load - kv_aware - stale) / decode))
    if stale > 0:
        problems.append("%d decode selections fell back to round_robin_stale" % stale)
print("PASS" if not problems else "FAIL")
print("%d kv_metrics samples, longest gap %d ms" % (frames, gap) if not problems else "%d problem(s)" % len(problems))
for p in problems:
    print("  problem: " + p)
for d in details:
    print("  " + d)
PY
verdict=$(head -n1 "$tmp/step2.out")
echo "step 2 (samples stay fresh): $verdict - $(sed -n 2p "$tmp/step2.out")"
tail -n +3 "$tmp/step2.out"
[ "$verdict" = PASS ] || step_fail 2

# ---- step 3: relay latency -------------------------------------------------------------------------------
if [ -z "$probe_image" ]; then
    echo "step 3 (relay latency): SKIP (no --probe-image)"
    echo "result: PASS"
    exit 0
fi
probe_pod="continuum-bus-probe-$(date +%s)-$$"
# Handshake timings only: no credential is sent, so the probe cannot open a session. -k because the check is
# the timing, not the chain (the broker verifies the router's certificate itself).
probe_cmd="i=0; while [ \$i -lt $probe_count ]; do curl -sk -o /dev/null --connect-timeout 5 --max-time 10 \
-w '%{time_namelookup} %{time_connect} %{time_appconnect}\n' \"\$BUS_URL\"; i=\$((i+1)); done"
overrides=$(python3 - "$probe_pod" "$probe_image" "$probe_cmd" "$bus_url" <<'PY'
import json, sys
name, image, cmd, url = sys.argv[1:5]
print(json.dumps({"spec": {
    "automountServiceAccountToken": False,
    "securityContext": {"runAsNonRoot": True, "runAsUser": 65534, "runAsGroup": 65534,
                        "seccompProfile": {"type": "RuntimeDefault"}},
    "containers": [{"name": name, "image": image, "command": ["sh", "-c", cmd],
                    "env": [{"name": "BUS_URL", "value": url}],
                    "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                        "capabilities": {"drop": ["ALL"]}},
                    "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}}}]}}))
PY
)
# Run, wait for the Pod to end (at most 120 s), read its log, delete it: no attach, so a Pod that ends before
# kubectl could attach loses nothing.
: >"$tmp/probe.out"
phase="not created"
if kubectl_ run "$probe_pod" --image="$probe_image" --restart=Never --labels=app.kubernetes.io/name=continuum-bus-probe \
        --overrides="$overrides" >/dev/null 2>"$tmp/probe.err"; then
    deadline=$((SECONDS + 120))
    while :; do
        phase=$(kubectl_ get pod "$probe_pod" -o 'jsonpath={.status.phase}' 2>>"$tmp/probe.err" || true)
        case "$phase" in Succeeded|Failed) break ;; esac
        [ "$SECONDS" -lt "$deadline" ] || { phase="${phase:-unknown} after 120 s"; break; }
        sleep 2
    done
    kubectl_ logs "$probe_pod" >"$tmp/probe.out" 2>>"$tmp/probe.err" || true
    kubectl_ delete pod "$probe_pod" --ignore-not-found --wait=false >/dev/null 2>&1 || true
fi
probe_pod=""
python3 - "$tmp/probe.out" "$phase" "$probe_count" >"$tmp/step3.out" <<'PY' || internal_error "the probe's output"
import statistics, sys
tcp, tls, failed = [], [], 0
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    parts = line.split()
    if len(parts) != 3:
        continue
    try:
        lookup, connect, app = map(float, parts)
    except ValueError:
        continue
    if connect <= 0 or app <= 0:
        failed += 1
        continue
    tcp.append((connect - lookup) * 1000)
    tls.append((app - connect) * 1000)
# A handshake that printed nothing (the Pod ended early) failed too.
failed += max(0, int(sys.argv[3]) - failed - len(tcp))
if not tcp:
    print("FAIL")
    print("no handshake completed (probe Pod %s)" % sys.argv[2])
    sys.exit(0)
half = statistics.median(tcp) / 2
print("PASS" if failed == 0 else "FAIL")
print("one-way estimate %.2f ms (half the median TCP connect)" % half if failed == 0
      else "%d of %d handshakes failed" % (failed, failed + len(tcp)))
print("  handshakes %d, median TCP connect %.2f ms, median TLS handshake %.2f ms, one-way estimate %.2f ms" % (
    len(tcp), statistics.median(tcp), statistics.median(tls), half))
PY
verdict=$(head -n1 "$tmp/step3.out")
echo "step 3 (relay latency): $verdict - $(sed -n 2p "$tmp/step3.out")"
tail -n +3 "$tmp/step3.out"
if [ "$verdict" != PASS ]; then
    sed 's/^/  kubectl: /' "$tmp/probe.err" | head -n 5
    step_fail 3
fi
echo "result: PASS"
