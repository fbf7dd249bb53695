#!/usr/bin/env python3
"""Writes continuum-router.json, the Grafana dashboard of every metric family the router exports.

Edit the panels here and rerun (python3 deploy/grafana/build-dashboard.py); router-app's MetricsCatalogTest
checks the JSON against a running router's /metrics: every metric a panel queries exists, and every
family the router exports (JVM binders aside) is on some panel. The event bus's families exist only while a
bus runs, so BrokerLiveCheckEndToEndTest checks their panels against a router with a live broker.
"""
import json
import os
import sys

SEL = '{job=~"$job", instance=~"$instance"}'


def sel(extra=""):
    return '{job=~"$job", instance=~"$instance"%s}' % ("" if not extra else ", " + extra)


panels = []
_next_id = [1]
_y = [0]


def row(title):
    panels.append({"type": "row", "title": title, "collapsed": False, "id": _next_id[0],
                   "gridPos": {"h": 1, "w": 24, "x": 0, "y": _y[0]}, "panels": []})
    _next_id[0] += 1
    _y[0] += 1
    _x[0] = 0


_x = [0]


def panel(title, targets, unit="short", kind="timeseries", width=8, description=""):
    if _x[0] + width > 24:
        _x[0] = 0
        _y[0] += 8
    p = {"type": kind, "title": title, "id": _next_id[0], "datasource": {"type": "prometheus", "uid": "${datasource}"},
         "gridPos": {"h": 8, "w": width, "x": _x[0], "y": _y[0]},
         "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
         "options": {"legend": {"displayMode": "list", "placement": "bottom"}},
         "targets": [{"refId": chr(ord("A") + i), "expr": expr, "legendFormat": legend,
                      "datasource": {"type": "prometheus", "uid": "${datasource}"}}
                     for i, (expr, legend) in enumerate(targets)]}
    if description:
        p["description"] = description
    panels.append(p)
    _next_id[0] += 1
    _x[0] += width
    if _x[0] >= 24:
        _x[0] = 0
        _y[0] += 8


def end_row():
    if _x[0] > 0:
        _x[0] = 0
        _y[0] += 8


def quantiles(metric, by, legend):
    return [("histogram_quantile(%s, sum by (le, %s) (rate(%s_bucket%s[$__rate_interval])))" % (q, by, metric, SEL),
             "p%s %s" % (q[2:] if q != "0.5" else "50", legend)) for q in ("0.5", "0.99")]


row("Requests")
panel("Requests by endpoint and status",
      [("sum by (endpoint, status) (rate(http_requests_total%s[$__rate_interval]))" % SEL, "{{endpoint}} {{status}}")],
      "reqps")
panel("Request latency (received to response end)",
      quantiles("http_request_duration_seconds", "endpoint", "{{endpoint}}")
      + [("max by (endpoint) (http_request_duration_seconds_max%s)" % SEL, "max {{endpoint}}")], "s")
panel("Error ratio (5xx)",
      [("sum(rate(http_requests_total%s[$__rate_interval])) / sum(rate(http_requests_total%s[$__rate_interval]))"
        % (sel('status=~"5.."'), SEL), "5xx share")], "percentunit")
end_row()

row("Backends and breakers")
panel("Upstream attempts by backend and status class",
      [("sum by (backend, status_class) (rate(continuum_backend_requests_total%s[$__rate_interval]))" % SEL,
        "{{backend}} {{status_class}}")], "reqps")
panel("Upstream latency (attempt to response head)",
      quantiles("continuum_backend_request_duration_seconds", "backend", "{{backend}}")
      + [("max by (backend) (continuum_backend_request_duration_seconds_max%s)" % SEL, "max {{backend}}")], "s")
panel("Healthy backends (1 routable, 0 down or warming up)",
      [("min by (backend) (continuum_backend_healthy%s)" % SEL, "{{backend}}")], "short", "state-timeline")
panel("Circuit breaker state (0 closed, 1 half open, 2 open)",
      [("max by (backend) (continuum_backend_circuit_state%s)" % SEL, "{{backend}}")], "short", "state-timeline")
panel("Retries by backend and reason",
      [("sum by (backend, reason) (rate(continuum_retries_total%s[$__rate_interval]))" % SEL, "{{backend}} {{reason}}")],
      "reqps")
panel("Rate limited (429) by tier and stream aborts by side",
      [("sum by (tier) (rate(continuum_rate_limited_total%s[$__rate_interval]))" % SEL, "429 {{tier}}"),
       ("sum by (side) (rate(continuum_stream_aborts_total%s[$__rate_interval]))" % SEL, "abort {{side}}")], "reqps")
end_row()

row("Ingress")
panel("Client connections (against server.max_connections)",
      [("sum(continuum_ingress_connections%s)" % SEL, "connections")], "short")
panel("Buffered request body bytes",
      [("sum(continuum_ingress_buffered_request_bytes%s)" % SEL, "buffered")], "bytes")
panel("Refused before routing, by reason",
      [("sum by (reason) (rate(continuum_ingress_rejected_total%s[$__rate_interval]))" % SEL, "{{reason}}"),
       ("sum(rate(continuum_ingress_out_of_memory_total%s[$__rate_interval]))" % SEL, "out of memory")], "reqps")
end_row()

row("Dynamo discovery")
panel("Workers by namespace and role",
      [("sum by (namespace, role) (continuum_dynamo_discovery_workers%s)" % SEL, "{{namespace}} {{role}}")])
panel("Discovery connected (1) and registry generation",
      [("min(continuum_dynamo_discovery_connected%s)" % SEL, "connected"),
       ("max(continuum_dynamo_registry_generation%s)" % SEL, "generation")])
panel("Discovery events by kind",
      [("sum by (kind) (rate(continuum_dynamo_discovery_events_total%s[$__rate_interval]))" % SEL, "{{kind}}")],
      "ops")
end_row()

row("Dynamo load signals")
panel("kv_metrics subscriptions by state",
      [("sum by (state, transport) (continuum_dynamo_load_subscriptions%s)" % SEL, "{{state}} {{transport}}")])
panel("kv_metrics messages by result",
      [("sum by (result) (rate(continuum_dynamo_load_events_total%s[$__rate_interval]))" % SEL, "{{result}}")], "ops")
panel("Active decode blocks per worker rank",
      [("max by (namespace, worker, dp_rank) (continuum_dynamo_load_active_decode_blocks%s)" % SEL,
        "{{worker}}/{{dp_rank}}")])
panel("Active prefill tokens per worker rank",
      [("max by (namespace, worker, dp_rank) (continuum_dynamo_load_active_prefill_tokens%s)" % SEL,
        "{{worker}}/{{dp_rank}}")])
panel("KV blocks used per worker rank",
      [("max by (namespace, worker, dp_rank) (continuum_dynamo_load_kv_used_blocks%s)" % SEL,
        "{{worker}}/{{dp_rank}}")])
panel("NATS event plane",
      [("max by (state) (continuum_nats_connection_state%s)" % SEL, "{{state}}"),
       ("sum(increase(continuum_nats_reconnects_total%s[$__rate_interval]))" % SEL, "reconnects"),
       ("sum by (reason) (increase(continuum_nats_dropped_messages_total%s[$__rate_interval]))" % SEL,
        "dropped {{reason}}")],
      description="The shared dynamo.nats connection (docs/nats.md): its state, reconnects, and messages "
                  "dropped before decoding.")
panel("Replica sync peers and lag",
      [("max by (state) (continuum_replicas_peers%s)" % SEL, "peers {{state}}"),
       ("max(continuum_replicas_sync_lag_seconds%s)" % SEL, "lag seconds"),
       ("sum by (reason) (increase(continuum_replicas_resyncs_total%s[$__rate_interval]))" % SEL,
        "resync {{reason}}"),
       ("sum by (reason) (increase(continuum_replicas_peer_departures_total%s[$__rate_interval]))" % SEL,
        "departed {{reason}}")],
      description="dynamo.replicas (docs/replicas.md): peers followed by state, the longest silence of a peer, "
                  "snapshots asked for and peers dropped.")
panel("Replica sync messages",
      [("sum by (kind) (rate(continuum_replicas_published_messages_total%s[$__rate_interval]))" % SEL,
        "sent {{kind}}"),
       ("sum by (kind) (rate(continuum_replicas_published_bytes_total%s[$__rate_interval]))" % SEL,
        "bytes/s {{kind}}"),
       ("sum by (reason) (increase(continuum_replicas_dropped_messages_total%s[$__rate_interval]))" % SEL,
        "dropped {{reason}}"),
       ("sum(increase(continuum_replicas_unpublished_batches_total%s[$__rate_interval]))" % SEL,
        "unpublished"),
       ("max(continuum_replicas_session_bindings%s)" % SEL, "session bindings"),
       ("sum(increase(continuum_replicas_sessions_unbound_total%s[$__rate_interval]))" % SEL,
        "sessions unbound")],
      description="What this replica publishes (messages and payload bytes by kind), what it dropped from peers "
                  "by reason, batches not published while NATS was away, and session bindings.")
end_row()

row("Dynamo selection and disaggregated serving")
panel("Selections by role and reason",
      [("sum by (role, reason) (rate(continuum_dynamo_selection_total%s[$__rate_interval]))" % SEL,
        "{{role}} {{reason}}")], "ops",
      description="load: chosen by a fresh load sample; round_robin_*: no usable signal; no_prefill_pool: no "
                  "prefill pin was needed or possible; kv_aware: the KV formula; conditional_bypass: the decode "
                  "worker prefilled.")
panel("Chat completions by routing path",
      [("sum by (routing_path) (rate(disaggregated_requests_total%s[$__rate_interval]))" % SEL, "{{routing_path}}")],
      "reqps")
panel("Shim path failures by phase",
      [("sum by (phase) (rate(disaggregated_errors_total%s[$__rate_interval]))" % SEL, "{{phase}}")], "reqps")
panel("Active sequences (the router's own dispatches)",
      [("sum(continuum_dynamo_active_sequences%s)" % SEL, "sequences"),
       ("sum(continuum_dynamo_active_blocks%s)" % SEL, "blocks"),
       ("sum(continuum_dynamo_active_prefill_tokens%s)" % SEL, "prefill tokens")],
      description="Requests this router dispatched, from dispatch to their end; prefill tokens until the first "
                  "token; shared prefixes counted once per rank (docs/kv-routing.md).")
panel("Active sequences ended by the router",
      [("sum by (reason) (increase(continuum_dynamo_active_sequence_expirations_total%s[$__rate_interval]))" % SEL,
        "{{reason}}"),
       ("sum(increase(continuum_dynamo_active_sequences_untracked_total%s[$__rate_interval]))" % SEL, "untracked")],
      description="lifetime: still counting after 5 minutes; worker_left: its worker left the fleet; untracked: "
                  "dispatched while 65,536 sequences were tracked.")
end_row()

row("KV prompt pipeline and model fallback")
panel("KV prompts by result",
      [("sum by (result) (rate(continuum_dynamo_kv_prompts_total%s[$__rate_interval]))" % SEL, "{{result}}")],
      "reqps", description="encoded: token IDs and block hashes computed; the rest fall back to load-based "
                           "selection for that request.")
panel("KV prompt fallbacks by reason",
      [("sum by (reason) (rate(continuum_dynamo_kv_prompt_failures_total%s[$__rate_interval]))" % SEL, "{{reason}}")],
      "reqps")
panel("KV render pool turned away, by lane",
      [("sum by (lane) (rate(continuum_dynamo_kv_render_pool_busy_total%s[$__rate_interval]))" % SEL, "{{lane}}")],
      "reqps", description="light: even cheap prompts found no render permit (the pool is short of cores); "
                           "heavy: a long new prompt found no heavy permit (bursts of long new text).")
panel("KV prompt render and tokenize time",
      [("histogram_quantile(0.99, sum by (le) (rate(continuum_dynamo_kv_prompt_render_seconds_bucket%s[$__rate_interval])))"
        % SEL, "p99 render"),
       ("histogram_quantile(0.99, sum by (le) (rate(continuum_dynamo_kv_prompt_tokenize_seconds_bucket%s[$__rate_interval])))"
        % SEL, "p99 tokenize"),
       ("max(continuum_dynamo_kv_prompt_render_seconds_max%s)" % SEL, "max render"),
       ("max(continuum_dynamo_kv_prompt_tokenize_seconds_max%s)" % SEL, "max tokenize")], "s",
      description="Chat-template render and tokenization per prompt (tokenize includes the segment cache).")
panel("KV prompt tokens and segment cache",
      [("sum by (source) (rate(continuum_dynamo_kv_prompt_tokens_total%s[$__rate_interval]))" % SEL,
        "tokens {{source}}"),
       ("sum by (result) (rate(continuum_dynamo_kv_segment_cache_lookups_total%s[$__rate_interval]))" % SEL,
        "lookups {{result}}"),
       ("sum(rate(continuum_dynamo_kv_segment_cache_evictions_total%s[$__rate_interval]))" % SEL, "evictions"),
       ("sum by (result) (increase(continuum_dynamo_kv_tokenizer_segmented_total%s[$__rate_interval]))" % SEL,
        "tokenizer check {{result}}")],
      description="Token IDs served from the segment cache against those encoded (dynamo.kv.segment_cache_bytes; "
                  "off by default).")
panel("KV segment cache bytes",
      [("max(continuum_dynamo_kv_segment_cache_bytes%s)" % SEL, "held"),
       ("max(continuum_dynamo_kv_segment_cache_max_bytes%s)" % SEL, "bound")], "bytes")
panel("KV render-once and block-hash caches",
      [("sum by (result) (rate(continuum_dynamo_kv_render_cache_lookups_total%s[$__rate_interval]))" % SEL,
        "render {{result}}"),
       ("sum(rate(continuum_dynamo_kv_render_cache_evictions_total%s[$__rate_interval]))" % SEL, "render evictions"),
       ("sum by (result) (rate(continuum_dynamo_kv_block_hash_cache_lookups_total%s[$__rate_interval]))" % SEL,
        "block hashes {{result}}"),
       ("sum(rate(continuum_dynamo_kv_block_hash_cache_evictions_total%s[$__rate_interval]))" % SEL,
        "block hash evictions"),
       ("sum by (result) (increase(continuum_dynamo_kv_template_probes_total%s[$__rate_interval]))" % SEL,
        "template probe {{result}}")],
      description="Prompts whose earlier turns were reused (render once, dynamo.kv.render_cache_bytes) and block "
                  "hashes taken by prefix (dynamo.kv.block_hash_cache_bytes); template probe whole: a chat template "
                  "rendered whole on every request.")
panel("KV render-once and block-hash cache bytes",
      [("max(continuum_dynamo_kv_render_cache_bytes%s)" % SEL, "render held"),
       ("max(continuum_dynamo_kv_render_cache_max_bytes%s)" % SEL, "render bound"),
       ("max(continuum_dynamo_kv_block_hash_cache_bytes%s)" % SEL, "block hashes held"),
       ("max(continuum_dynamo_kv_block_hash_cache_max_bytes%s)" % SEL, "block hashes bound")], "bytes")
panel("KV artifacts and tokenizer loads",
      [("sum by (result) (increase(continuum_dynamo_kv_artifacts_total%s[$__rate_interval]))" % SEL,
        "artifact {{result}}"),
       ("sum by (result) (increase(continuum_dynamo_kv_tokenizer_loads_total%s[$__rate_interval]))" % SEL,
        "tokenizer {{result}}")], "short",
      description="unpinned: a card names an artifact whose checksum is not in dynamo.kv.pinned_artifacts.")
panel("Model fallbacks by reason",
      [("sum by (reason) (rate(continuum_model_fallbacks_total%s[$__rate_interval]))" % SEL, "{{reason}}")],
      "reqps", description="A request served by a model of its fallback chain (x-continuum-fallback-model).")
end_row()

row("KV-aware routing")
panel("KV selections by result",
      [("sum by (result) (rate(continuum_dynamo_kv_selection_total%s[$__rate_interval]))" % SEL, "{{result}}")],
      "ops", description="overlap / no_overlap: scored with the KV formula; bypass: conditional disaggregation; "
                         "the rest took the load-based decision (see docs/kv-routing.md).")
panel("kv-events subscriptions",
      [("sum by (state, transport) (continuum_dynamo_kv_subscriptions%s)" % SEL, "{{state}} {{transport}}"),
       ("sum(increase(continuum_dynamo_kv_transport_refusals_total%s[$__rate_interval]))" % SEL, "refused")])
panel("kv-events by result",
      [("sum by (result) (rate(continuum_dynamo_kv_events_total%s[$__rate_interval]))" % SEL, "{{result}}")],
      "ops", description="indexed, or why not: replays, gaps, identity mismatches, ceilings, other tiers.")
panel("KV index size",
      [("max(continuum_dynamo_kv_index_nodes%s)" % SEL, "nodes"),
       ("max(continuum_dynamo_kv_index_ownerships%s)" % SEL, "ownerships"),
       ("sum(rate(continuum_dynamo_kv_index_contended_lookups_total%s[$__rate_interval]))" % SEL,
        "contended lookups/s")])
panel("KV index blocks per rank",
      [("max by (namespace, worker, dp_rank) (continuum_dynamo_kv_index_rank_blocks%s)" % SEL,
        "{{worker}}/{{dp_rank}}")])
panel("KV predicted cache",
      [("sum by (result) (rate(continuum_dynamo_kv_predicted_blocks_total%s[$__rate_interval]))" % SEL, "{{result}}"),
       ("max(continuum_dynamo_kv_predicted_entries%s)" % SEL, "entries"),
       ("sum(rate(continuum_dynamo_kv_predicted_contended_lookups_total%s[$__rate_interval]))" % SEL,
        "contended lookups/s")],
      description="(rank, block) predictions from the router's own picks: predicted, confirmed by kv-events, "
                  "expired, evicted (capacity), departed (worker left), dropped (bounds, contention).")
panel("KV mode by namespace",
      [("max by (mode, reason) (continuum_dynamo_kv_mode_namespaces%s)" % SEL, "{{mode}} ({{reason}})")],
      description="Namespaces running precise (kv-events) or approximate (the router's own picks) KV routing.")
panel("Decision quality: cache hits taken",
      [("sum(rate(continuum_dynamo_decision_winner_overlap_blocks_total%s[$__rate_interval])) / "
        "sum(rate(continuum_dynamo_decision_best_overlap_blocks_total%s[$__rate_interval]))" % (SEL, SEL),
        "winner / best overlap")],
      "percentunit", description="Leading prompt blocks the winner held over the most any eligible candidate held "
                                 "(docs/operations.md, Decision quality).")
panel("Decision quality: avoidable prefill",
      [("sum(rate(continuum_dynamo_decision_avoidable_prefill_tokens_total%s[$__rate_interval]))" % SEL,
        "avoidable tokens/s"),
       ("sum(rate(continuum_dynamo_decision_scored_prompt_tokens_total%s[$__rate_interval]))" % SEL,
        "scored prompt tokens/s"),
       ("sum(rate(continuum_dynamo_decisions_recorded_total%s[$__rate_interval]))" % SEL, "records/s")],
      description="Prompt tokens prefilled although an eligible, not-busier rank held them.")
panel("Decision quality: observed / predicted TTFT",
      quantiles("continuum_dynamo_decision_ttft_ratio", "basis", "{{basis}}")
      + [("max by (basis) (continuum_dynamo_decision_ttft_ratio_max%s)" % SEL, "max {{basis}}")],
      description="Observed over predicted time to first token of the rank that prefilled; 1 is a perfect "
                  "forecast (docs/operations.md, Decision quality).")
end_row()

row("Backend KV cache index")
panel("Backend KV cache index: events by result",
      [("sum by (result) (rate(continuum_kv_cache_index_events_total%s[$__rate_interval]))" % SEL, "{{result}}")],
      "ops", description="SSE KV events of dynamo.kv_cache_index sources (kv-listener or direct).")
panel("Backend KV cache index: sources by state",
      [("sum by (state) (continuum_kv_cache_index_sources%s)" % SEL, "{{state}}")],
      description="pending: no kv-listener session carries the backend.")
panel("Backend KV cache index: blocks",
      [("sum(continuum_kv_cache_index_blocks%s)" % SEL, "blocks")])
panel("Backend KV cache index: stream failures by reason",
      [("sum by (reason) (rate(continuum_kv_cache_index_stream_failures_total%s[$__rate_interval]))" % SEL,
        "{{reason}}")],
      "ops", description="Failed attempts to open or read a source's stream: tls, connect, http, event_bus. "
      "Which source: the admin view's kv_cache_index_sources.")
end_row()

row("Event bus and brokers")
panel("Event bus sessions and connections",
      [("sum(continuum_dynamo_event_bus_sessions%s)" % SEL, "sessions"),
       ("sum(continuum_dynamo_event_bus_connections%s)" % SEL, "connections")],
      description="Welcomed agent sessions (brokers and kv-listeners) and open TCP connections to the listener.")
panel("Event bus refusals by code",
      [("sum by (code) (increase(continuum_dynamo_event_bus_refusals_total%s[$__rate_interval]))" % SEL,
        "{{code}}")],
      description="Refused connections and requests, and ended sessions, by the protocol's error code "
                  "(docs/event-bus-protocol.md).")
panel("Broker sessions per Dynamo namespace",
      [("min by (namespace) (continuum_dynamo_broker_namespace_sessions%s)" % SEL, "{{namespace}}")],
      description="Live, non-draining broker sessions covering each namespace; 0 means its broker-transport "
                  "subscriptions wait (pending). Below the number of deployed brokers: one is down.")
panel("Broker subscriptions carried, by broker and family",
      [("sum by (broker, family) (continuum_dynamo_broker_subscriptions%s)" % SEL, "{{broker}} {{family}}")],
      description="Connected subscriptions each configured broker carries (rendezvous placement, about 1/N each).")
panel("Broker subscriptions pending, by namespace and family",
      [("sum by (namespace, family) (continuum_dynamo_broker_pending_subscriptions%s)" % SEL,
        "{{namespace}} {{family}}")],
      description="Broker-transport subscriptions waiting for a covering broker; should be 0. The broker gauges "
                  "are debounced (250 ms), see docs/metrics.md.")
end_row()

row("Configuration and process")
panel("Config reloads by result",
      [("sum by (result) (increase(continuum_config_reloads_total%s[$__rate_interval]))" % SEL, "{{result}}")])
panel("JVM memory used by area",
      [("sum by (area) (jvm_memory_used_bytes%s)" % SEL, "{{area}}"),
       ("sum(jvm_memory_max_bytes%s)" % sel('area="heap"'), "heap max")], "bytes")
panel("GC pause time",
      [("sum by (gc) (rate(jvm_gc_pause_seconds_sum%s[$__rate_interval]))" % SEL, "{{gc}}")], "s")
panel("Threads",
      [("sum(jvm_threads_live_threads%s)" % SEL, "live"), ("sum(jvm_threads_peak_threads%s)" % SEL, "peak")])
panel("CPU (process and system)",
      [("max(process_cpu_usage%s)" % SEL, "process"), ("max(system_cpu_usage%s)" % SEL, "system")], "percentunit")
panel("Uptime", [("max(process_uptime_seconds%s)" % SEL, "uptime")], "s", "stat")
end_row()

row("Admin fleet page event streams")
panel("Fleet event streams open",
      [("sum(continuum_admin_event_streams%s)" % SEL, "open"),
       ("sum(increase(continuum_admin_event_streams_refused_total%s[$__rate_interval]))" % SEL, "refused (limit)")],
      description="Server-sent-event streams of the fleet page (at most 8); refused streams make the page poll.")
panel("Fleet event frames",
      [("sum by (kind) (rate(continuum_admin_event_frames_total%s[$__rate_interval]))" % SEL, "{{kind}}"),
       ("sum by (reason) (rate(continuum_admin_event_frames_dropped_total%s[$__rate_interval]))" % SEL,
        "dropped {{reason}}")], "ops",
      description="Frames written per second (at most one a second per stream) and frames dropped for clients "
                  "that were not reading.")
end_row()

row("Backend KV cache index: engine streams (transport zmq)")
panel("Engine KV streams: events by kind",
      [("sum by (kind) (rate(continuum_kv_cache_index_engine_events_total%s[$__rate_interval]))" % SEL, "{{kind}}")],
      "ops", description="Events applied from vLLM/SGLang native KV-event streams (dynamo.kv_cache_index sources "
      "with transport zmq).")
panel("Engine KV streams: drops by reason",
      [("sum by (reason) (rate(continuum_kv_cache_index_engine_drops_total%s[$__rate_interval]))" % SEL,
        "{{reason}}")],
      "ops", description="Batches or events not applied: oversized, bad_frame, malformed, unknown_tag, wrong_type, "
      "too_large, duplicate, over_capacity.")
panel("Engine KV streams: gaps, replays and restarts",
      [("sum(increase(continuum_kv_cache_index_engine_gaps_total%s[$__rate_interval]))" % SEL, "gaps"),
       ("sum by (result) (increase(continuum_kv_cache_index_engine_replays_total%s[$__rate_interval]))" % SEL,
        "replay {{result}}"),
       ("sum(increase(continuum_kv_cache_index_engine_restarts_total%s[$__rate_interval]))" % SEL, "restarts")],
      description="A failed or unavailable replay, and a restart, clear the backend's blocks.")
end_row()

row("Backend KV cache index: selection of backends[]")
panel("Backend selections by result",
      [("sum by (result) (rate(continuum_kv_cache_index_selections_total%s[$__rate_interval]))" % SEL,
        "{{result}}")],
      "reqps", description="cached / uncached: the index chose; any other result: selection_strategy picked, for "
      "that reason (no_model, no_source, artifact_unpinned, tokenizer_unavailable, prompt_too_large, "
      "render_unavailable).")
panel("Backend selections: prefix hit rate",
      [("sum(rate(continuum_kv_cache_index_selection_cached_blocks_total%s[$__rate_interval])) / "
        "sum(rate(continuum_kv_cache_index_selection_prompt_blocks_total%s[$__rate_interval]))" % (SEL, SEL),
        "cached / prompt blocks")],
      "percentunit", description="Of the prompt blocks of requests the index chose for, those the chosen backend "
      "held.")
end_row()

dashboard = {
    "title": "Continuum Router",
    "uid": "continuum-router",
    "description": "Continuum Router: requests, backends and breakers, ingress guards, Dynamo discovery, "
                   "kv_metrics load signals, worker selection, disaggregated serving, KV-aware routing, the backend KV "
                   "cache index, the event bus and its brokers, config and JVM. "
                   "Metric reference: docs/metrics.md.",
    "tags": ["continuum-router", "dynamo", "llm"],
    "schemaVersion": 39,
    "version": 1,
    "editable": True,
    "refresh": "30s",
    "time": {"from": "now-1h", "to": "now"},
    "timezone": "",
    "templating": {"list": [
        {"type": "datasource", "name": "datasource", "label": "Data source", "query": "prometheus",
         "current": {}, "hide": 0},
        {"type": "query", "name": "job", "label": "Job", "datasource": {"type": "prometheus", "uid": "${datasource}"},
         "query": {"query": "label_values(http_requests_total, job)", "refId": "job"},
         "definition": "label_values(http_requests_total, job)", "includeAll": True, "multi": True,
         "allValue": ".*", "current": {}, "refresh": 2, "hide": 0},
        {"type": "query", "name": "instance", "label": "Instance",
         "datasource": {"type": "prometheus", "uid": "${datasource}"},
         "query": {"query": "label_values(http_requests_total{job=~\"$job\"}, instance)", "refId": "instance"},
         "definition": "label_values(http_requests_total{job=~\"$job\"}, instance)", "includeAll": True,
         "multi": True, "allValue": ".*", "current": {}, "refresh": 2, "hide": 0},
    ]},
    "annotations": {"list": []},
    "panels": panels,
}

# An optional path writes elsewhere (MetricsCatalogTest regenerates into a temporary file and compares).
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                         "continuum-router.json")
with open(out, "w", encoding="utf-8") as f:
    json.dump(dashboard, f, indent=2)
    f.write("\n")
