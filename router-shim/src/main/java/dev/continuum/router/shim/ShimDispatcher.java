package dev.continuum.router.shim;

import dev.continuum.router.proxy.DispatchHook;
import dev.continuum.router.proxy.DispatchPlan;
import dev.continuum.router.proxy.DispatchRequest;
import dev.continuum.router.discovery.DynamoSnapshot;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The disaggregated orchestrator's Dynamo path, as core's {@link DispatchHook}: for a chat completion whose
 * candidates include a usable shim replica, it runs the picker over the namespaces with such a replica and
 * returns a plan that sends the request to the winner namespace's pool with the picker's {@code x-dynamo-*}
 * headers (instance IDs in unsigned decimal, which is all {@code dynamo.frontend} accepts; rank headers
 * whenever the card declares {@code data_parallel_size}, including rank 0). The body keeps the client's
 * model ID; {@code dynamo.shim.model_map} applies to candidate matching only.
 *
 * <p>Install with {@code proxyService.dispatchHook(dispatcher)}. The picker is replaceable at run time
 * ({@link #setPicker}); the snapshot and config suppliers are read on every request, so a registry update or
 * a reload of {@code dynamo.shim} applies to the next request.
 */
public final class ShimDispatcher implements DispatchHook {
    /** Upstream's {@code DIRECT_MODE_PREFILL_ID_ERROR}: a direct-mode frontend refusing a request without a prefill pin. */
    public static final String PREFILL_REFUSAL = "Prefill worker ID required in Direct routing mode";
    /** The error code the client gets for that refusal (503). */
    public static final String REFUSAL_CODE = "disaggregated_prefill_decode_unavailable";

    static final String WORKER_INSTANCE_ID = "x-dynamo-worker-instance-id";
    static final String PREFILL_INSTANCE_ID = "x-dynamo-prefill-instance-id";
    static final String DP_RANK = "x-dynamo-dp-rank";
    static final String PREFILL_DP_RANK = "x-dynamo-prefill-dp-rank";
    static final String DISCLOSED_WORKER = "x-continuum-worker-instance-id";
    static final String DISCLOSED_PREFILL = "x-continuum-prefill-instance-id";


    private final Supplier<DynamoSnapshot> snapshots;
    private final Supplier<ShimConfig> config;
    private volatile DynamoWorkerPicker picker;
    private final DisaggregatedMetrics metrics;
    private volatile @Nullable Offer lastOffer;

    private ShimDispatcher(Supplier<DynamoSnapshot> snapshots, Supplier<ShimConfig> config, DynamoWorkerPicker picker,
            DisaggregatedMetrics metrics) {
        this.snapshots = Objects.requireNonNull(snapshots, "snapshots");
        this.config = Objects.requireNonNull(config, "config");
        this.picker = Objects.requireNonNull(picker, "picker");
        this.metrics = metrics;
    }

    /**
     * @param snapshots the registry's current view ({@code registry::snapshot})
     * @param config    the live {@code dynamo.shim} ({@code () -> configStore.current().dynamo().section(shimSection)})
     * @param picker    the initial picker ({@link DynamoWorkerPicker#loadBased})
     * @param registry  where {@code disaggregated_requests_total} and {@code disaggregated_errors_total} go
     */
    public static ShimDispatcher create(Supplier<DynamoSnapshot> snapshots, Supplier<ShimConfig> config,
            DynamoWorkerPicker picker, MeterRegistry registry) {
        return new ShimDispatcher(snapshots, config, picker, new DisaggregatedMetrics(registry));
    }

    public DynamoWorkerPicker picker() {
        return picker;
    }

    /** Replaces the picker for requests that start afterwards (the KV-aware picker replaces the default). */
    public void setPicker(DynamoWorkerPicker next) {
        picker = Objects.requireNonNull(next, "picker");
    }

    @Override
    public @Nullable DispatchPlan plan(DispatchRequest request) {
        return plan(request, null);
    }

    /**
     * The plan for a request whose prompt the KV pipeline encoded ({@code prompt}, handed to the picker), or did
     * not (null). Safe on any thread: the KV path calls it where the prompt was encoded.
     */
    public @Nullable DispatchPlan plan(DispatchRequest request, @Nullable PromptBlocks prompt) {
        return plan(request, prompt, null);
    }

    /**
     * As {@link #plan(DispatchRequest, PromptBlocks)}, for a request the KV pipeline did not encode, with the
     * reason ({@code fallback}, one of the fallback results of {@link KvSelectionResult}) for the KV-aware
     * picker to count.
     */
    public @Nullable DispatchPlan plan(DispatchRequest request, @Nullable PromptBlocks prompt,
            @Nullable KvSelectionResult fallback) {
        DispatchPlan plan = planOrNull(request, prompt, fallback);
        if (plan == null && !request.resend()) {
            // A resend without a plan is counted by its request's earlier plan, when that one ends.
            metrics.request(RoutingPath.UNIFIED);
        }
        return plan;
    }

    private @Nullable DispatchPlan planOrNull(DispatchRequest request, @Nullable PromptBlocks prompt,
            @Nullable KvSelectionResult fallback) {
        DynamoSnapshot snapshot = snapshots.get();
        ShimConfig shim = config.get();
        if (!snapshot.enabled() || !shim.configured()) {
            return null;
        }
        Offer offer = offer(shim, snapshot.namespaces(), request.usableBackends());
        if (offer.pools().isEmpty()) {
            return null;
        }
        Selection selection = picker.pick(snapshot, new PickRequest(shim.workerModel(request.model()),
                offer.namespaces(), request.estimatedPromptTokens(), prompt, fallback));
        if (selection == null) {
            return null;
        }
        List<String> pool = offer.pools().get(selection.namespace());
        if (pool == null) {
            // A picker that ignored the offered namespaces: never send a pin to another graph's frontend.
            selection.dispatch().ended();
            return null;
        }
        WorkerPin decode = selection.decode();
        // A conditional-disaggregation bypass pins the decode worker alone, by instance ID only
        // (docs/kv-routing.md): the frontend runs the whole request there.
        boolean bypass = selection.prefillReason() == SelectionReason.CONDITIONAL_BYPASS;
        WorkerPin prefill = selection.prefill();
        RoutingPath path = prefill != null ? RoutingPath.PREFILL_THEN_DECODE : RoutingPath.UNIFIED;
        Selection.Dispatch dispatch = selection.dispatch();
        Map<String, String> pins = bypass ? Map.of(WORKER_INSTANCE_ID, decode.decimal()) : pinHeaders(decode, prefill);
        return new DispatchPlan(pool, pins, disclosed(decode, prefill), path.label(),
                PREFILL_REFUSAL, REFUSAL_CODE, outcome -> {
                    dispatch.ended();
                    metrics.ended(path, outcome);
                });
    }

    /**
     * Graph-local dispatch: only namespaces with a replica this request may use offer candidates. The answer
     * depends on the shim config, the configured namespaces and the request's usable backends, which rarely
     * change between requests: the last one is kept and reused while all three are the same.
     */
    private Offer offer(ShimConfig shim, List<String> namespaces, List<String> usableBackends) {
        Offer last = lastOffer;
        if (last != null && last.shim() == shim && last.configuredNamespaces().equals(namespaces)
                && last.usableBackends().equals(usableBackends)) {
            return last;
        }
        Map<String, List<String>> pools = new LinkedHashMap<>();
        for (Map.Entry<String, List<String>> pool : shim.poolsByNamespace(namespaces).entrySet()) {
            List<String> replicas = new ArrayList<>();
            for (String b : pool.getValue()) {
                if (usableBackends.contains(b)) {
                    replicas.add(b);
                }
            }
            if (!replicas.isEmpty()) {
                pools.put(pool.getKey(), List.copyOf(replicas));
            }
        }
        Offer next = new Offer(shim, List.copyOf(namespaces), List.copyOf(usableBackends),
                Collections.unmodifiableMap(pools), Set.copyOf(pools.keySet()));
        lastOffer = next;
        return next;
    }

    /** The namespaces a request may be pinned in, and the usable replicas of each (immutable). */
    private record Offer(ShimConfig shim, List<String> configuredNamespaces, List<String> usableBackends,
            Map<String, List<String>> pools, Set<String> namespaces) {
    }

    /** The {@code x-dynamo-*} pins, immutable (the plan keeps such a map as it is). */
    private static Map<String, String> pinHeaders(WorkerPin decode, @Nullable WorkerPin prefill) {
        String d = decode.decimal();
        String dRank = decode.rankDecimal();
        if (prefill == null) {
            return decode.rankDeclared() ? Map.of(WORKER_INSTANCE_ID, d, DP_RANK, dRank) : Map.of(WORKER_INSTANCE_ID, d);
        }
        String p = prefill.decimal();
        String pRank = prefill.rankDecimal();
        if (decode.rankDeclared() && prefill.rankDeclared()) {
            return Map.of(WORKER_INSTANCE_ID, d, DP_RANK, dRank, PREFILL_INSTANCE_ID, p, PREFILL_DP_RANK, pRank);
        }
        if (decode.rankDeclared()) {
            return Map.of(WORKER_INSTANCE_ID, d, DP_RANK, dRank, PREFILL_INSTANCE_ID, p);
        }
        if (prefill.rankDeclared()) {
            return Map.of(WORKER_INSTANCE_ID, d, PREFILL_INSTANCE_ID, p, PREFILL_DP_RANK, pRank);
        }
        return Map.of(WORKER_INSTANCE_ID, d, PREFILL_INSTANCE_ID, p);
    }

    private static Map<String, String> disclosed(WorkerPin decode, @Nullable WorkerPin prefill) {
        return prefill == null ? Map.of(DISCLOSED_WORKER, decode.decimal())
                : Map.of(DISCLOSED_WORKER, decode.decimal(), DISCLOSED_PREFILL, prefill.decimal());
    }
}
