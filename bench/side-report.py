#!/usr/bin/env python3
"""Report of bench/run.sh: reads its results.tsv and TTFB samples, prints Markdown.

--write-docs FILE --report REPORT puts REPORT between the generated-report markers of FILE instead.
Medians over rounds; "spread" is (max - min) / median of requests/s over rounds, the run's noise.
"""
import argparse
import csv
import os
import statistics
import sys

BEGIN = "<!-- bench/run.sh report: begin -->"
END = "<!-- bench/run.sh report: end -->"
ORDER = ["direct", "router", "nginx", "haproxy", "portkey", "frontend", "router-dynamo"]


def baseline(c):
    return "frontend" if c == "router-dynamo" else "direct"


def ms(us):
    return f"{us / 1000:.2f}"


def write_docs(path, report):
    text = open(path).read()
    body = open(report).read().rstrip("\n")
    if BEGIN not in text or END not in text:
        sys.exit(f"{path}: no '{BEGIN}' / '{END}' markers")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    open(path, "w").write(head + BEGIN + "\n\n" + body + "\n\n" + END + tail)


def main():
    ap = argparse.ArgumentParser()
    for a in ["results", "ttfb-dir", "command", "date", "machine", "versions", "load", "router-opts",
              "settings", "rate-note", "notes", "write-docs", "report"]:
        ap.add_argument("--" + a, default="")
    ap.add_argument("--chunks", type=int, default=16)
    a = ap.parse_args()
    if a.write_docs:
        write_docs(a.write_docs, a.report)
        return

    rows = list(csv.DictReader(open(a.results), delimiter="\t"))
    runs = {}  # (contender, mode, conns, delay) -> [row]
    for r in rows:
        r["rps"] = int(r["requests"]) * 1e6 / max(1, int(r["duration_us"]))
        runs.setdefault((r["contender"], r["mode"], int(r["conns"]), int(r["delay_ms"])), []).append(r)

    def med(key, field):
        rs = runs.get(key)
        return statistics.median(float(r[field]) for r in rs) if rs else None

    def per_round(key, field):
        return {r["round"]: float(r[field]) for r in runs.get(key, [])}

    out = []
    p = out.append
    p(f"Run of {a.date}. Command: `{a.command}`")
    p("")
    p(f"- Machine: {a.machine}; {a.versions}.")
    p(f"- Load average (1, 5, 15 min): {a.load}.")
    p(f"- Router JVM flags: `{a.router_opts}`.")
    p(f"- {a.settings}; {a.chunks} SSE events plus `[DONE]` per stream.")
    for line in a.notes.splitlines():
        if line.strip():
            p(f"- Not measured: {line.strip()}")
    p("")
    p("Medians over the rounds. *spread*: (max - min) / median of requests/s over the rounds, the noise of "
      "this run. *added*: the contender's p50 / p99 minus the direct run's (for `router-dynamo`, minus the "
      "`frontend` run's: direct to the Dynamo frontend emulator). *CPU*: user + system seconds of the "
      "contender's processes per 10k requests. *RSS*: highest resident set sampled every 0.5 s during the "
      "runs of that row (nginx: master + workers). *x router*: requests/s divided by the router's in the same "
      "row group. *chunks/s*: requests/s x events per stream (17).")
    p("")
    p("| mode | conns | contender | req/s | spread | p50 ms | p99 ms | p99.9 ms | added p50 / p99 ms | CPU s / 10k req "
      "| RSS MiB | x router | chunks/s | errors |")
    p("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    modes = [m for m in ["buffered", "streaming"] if any(k[1] == m for k in runs)]
    conns_list = sorted({k[2] for k in runs if k[3] == 0})
    contenders = [c for c in ORDER if any(k[0] == c for k in runs)]
    for m in modes:
        for n in conns_list:
            router_rps = med(("router", m, n, 0), "rps")
            for c in contenders:
                key = (c, m, n, 0)
                if key not in runs:
                    continue
                rs = runs[key]
                rps = [r["rps"] for r in rs]
                rps_m = statistics.median(rps)
                spread = (max(rps) - min(rps)) / rps_m * 100 if rps_m else 0
                p50, p99, p999 = (med(key, f) for f in ["p50_us", "p99_us", "p999_us"])
                b = (baseline(c), m, n, 0)
                added = "-"
                if c not in ("direct", "frontend") and b in runs:
                    added = f"{(p50 - med(b, 'p50_us')) / 1000:+.2f} / {(p99 - med(b, 'p99_us')) / 1000:+.2f}"
                cpu = "-"
                if c != "direct":
                    cpu = f"{statistics.median(float(r['cpu_s']) * 1e4 / max(1, int(r['requests'])) for r in rs):.2f}"
                rss = max(int(r["rss_max_kib"] or 0) for r in rs)
                rss_s = f"{rss / 1024:.0f}" if rss else "-"
                ratio = f"{rps_m / router_rps:.2f}" if router_rps else "-"
                chunks = f"{rps_m * (a.chunks + 1):.0f}" if m == "streaming" else "-"
                errs = sum(int(r["errors"]) for r in rs)
                p(f"| {m} | {n} | {c} | {rps_m:.0f} | {spread:.0f}% | {ms(p50)} | {ms(p99)} | {ms(p999)} | {added} "
                  f"| {cpu} | {rss_s} | {ratio} | {chunks} | {errs} |")
    p("")

    rate_keys = sorted({k for k in runs if k[3] > 0}, key=lambda k: ORDER.index(k[0]))
    if rate_keys:
        p(f"**p99 at about half the router's peak rate** (buffered; {a.rate_note}):")
        p("")
        p("| contender | req/s | p50 ms | p99 ms | p99.9 ms | added p50 / p99 ms over direct | CPU s / 10k req |")
        p("|---|---|---|---|---|---|---|")
        for k in rate_keys:
            c = k[0]
            b = ("direct",) + k[1:]
            added = "-"
            if c != "direct" and b in runs:
                added = (f"{(med(k, 'p50_us') - med(b, 'p50_us')) / 1000:+.3f} / "
                         f"{(med(k, 'p99_us') - med(b, 'p99_us')) / 1000:+.3f}")
            cpu = "-" if c == "direct" else \
                f"{statistics.median(float(r['cpu_s']) * 1e4 / max(1, int(r['requests'])) for r in runs[k]):.2f}"
            p(f"| {c} | {med(k, 'rps'):.0f} | {ms(med(k, 'p50_us'))} | {ms(med(k, 'p99_us'))} "
              f"| {ms(med(k, 'p999_us'))} | {added} | {cpu} |")
        p("")

    ttfb = {}
    for c in contenders:
        f = os.path.join(a.ttfb_dir, f"ttfb-{c}.txt")
        if os.path.exists(f):
            vals = sorted(float(line.split()[0]) * 1e3 for line in open(f) if line.strip())
            if vals:
                ttfb[c] = vals
    if ttfb:
        p("**Time to first byte** (streamed requests one after another on one kept-alive connection, curl's "
          "`time_starttransfer`, idle proxies):")
        p("")
        p("| contender | samples | TTFB p50 ms | p90 ms | p99 ms | added p50 ms over its direct baseline | p50 minus nginx's ms |")
        p("|---|---|---|---|---|---|---|")
        for c, v in ttfb.items():
            q = lambda x: v[min(len(v) - 1, int(x * len(v)))]
            bs = ttfb.get(baseline(c))
            added = f"{q(0.5) - bs[len(bs) // 2]:+.3f}" if bs and c not in ("direct", "frontend") else "-"
            ng = ttfb.get("nginx")
            vs_ng = f"{q(0.5) - ng[len(ng) // 2]:+.3f}" if ng and c != "nginx" else "-"
            p(f"| {c} | {len(v)} | {q(0.5):.3f} | {q(0.9):.3f} | {q(0.99):.3f} | {added} | {vs_ng} |")
        p("")

    # Goals, as ratios within each round (min - max over rounds) and of the medians.
    def ratio_range(k1, k2, field="rps"):
        a1, a2 = per_round(k1, field), per_round(k2, field)
        rr = [a1[r] / a2[r] for r in a1 if r in a2 and a2[r]]
        return (min(rr), max(rr)) if rr else None

    goals = []
    rng = ratio_range(("router", "buffered", 64, 0), ("nginx", "buffered", 64, 0))
    if rng:
        goals.append(("buffered, 64 connections: router req/s >= nginx's", f"{rng[0]:.2f} - {rng[1]:.2f}", rng[0] >= 1))
    rng = ratio_range(("router", "buffered", 64, 0), ("portkey", "buffered", 64, 0))
    if rng:
        goals.append(("buffered, 64 connections: router req/s >= 5x Portkey's", f"{rng[0]:.1f} - {rng[1]:.1f}x", rng[0] >= 5))
    rk = [k for k in rate_keys if k[0] == "router"]
    if rk:
        d = per_round(("direct",) + rk[0][1:], "p99_us")
        rr = per_round(rk[0], "p99_us")
        added = [(rr[r] - d[r]) / 1000 for r in rr if r in d]
        if added:
            goals.append(("p99 added over direct <= 1 ms at about half the router's peak rate",
                          f"{min(added):+.3f} - {max(added):+.3f} ms", max(added) <= 1))
    if "router" in ttfb and "nginx" in ttfb:
        dt = ttfb["router"][len(ttfb["router"]) // 2] - ttfb["nginx"][len(ttfb["nginx"]) // 2]
        goals.append(("streaming: TTFB p50 within 0.2 ms of nginx's", f"{dt:+.3f} ms", dt <= 0.2))
    for n in conns_list:
        rng = ratio_range(("router", "streaming", n, 0), ("nginx", "streaming", n, 0))
        if rng and n >= 16:
            goals.append((f"streaming, {n} connections: relayed chunks/s >= 0.9x nginx's",
                          f"{rng[0]:.2f} - {rng[1]:.2f}", rng[0] >= 0.9))
    k256 = [k for k in runs if k[0] == "router" and k[2] == 256 and k[3] == 0]
    if k256:
        rss = max(int(r["rss_max_kib"] or 0) for k in k256 for r in runs[k]) / 1024
        goals.append(("router RSS under 256 MiB at 256 connections", f"{rss:.0f} MiB", rss < 256))
    if goals:
        p("**Goals** (ratio of the router's number to the other's within each round, lowest - highest over the rounds):")
        p("")
        p("| goal | measured | met |")
        p("|---|---|---|")
        for g, v, ok in goals:
            p(f"| {g} | {v} | {'yes' if ok else 'no'} |")
        p("")
    print("\n".join(out))


if __name__ == "__main__":
    main()
