package dev.continuum.router.shim;

import dev.continuum.router.core.proxy.DispatchHook;
import dev.continuum.router.core.proxy.DispatchPlan;
import dev.continuum.router.core.proxy.DispatchRequest;
import dev.continuum.router.discovery.DynamoSnapshot;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.HashSet;
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
        if (plan == null) {
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
        // Graph-local dispatch: only namespaces with a replica this request may use now offer candidates.
        Map<String, List<String>> usable = new LinkedHashMap<>();
        for (Map.Entry<String, List<String>> pool : shim.poolsByNamespace(snapshot.namespaces()).entrySet()) {
            List<String> replicas = new ArrayList<>();
            for (String b : pool.getValue()) {
                if (request.usableBackends().contains(b)) {
                    replicas.add(b);
                }
            }
            if (!replicas.isEmpty()) {
                usable.put(pool.getKey(), replicas);
            }
        }
        if (usable.isEmpty()) {
            return null;
        }
        Set<String> namespaces = new HashSet<>(usable.keySet());
        Selection selection = picker.pick(snapshot, new PickRequest(shim.workerModel(request.model()),
                namespaces, request.estimatedPromptTokens(), prompt, fallback));
        if (selection == null) {
            return null;
        }
        List<String> pool = usable.get(selection.namespace());
        if (pool == null) {
            // A picker that ignored the offered namespaces: never send a pin to another graph's frontend.
            selection.dispatch().ended();
            return null;
        }
        Map<String, String> headers = new LinkedHashMap<>();
        Map<String, String> disclosed = new LinkedHashMap<>();
        WorkerPin decode = selection.decode();
        headers.put(WORKER_INSTANCE_ID, decode.worker().decimal());
        disclosed.put(DISCLOSED_WORKER, decode.worker().decimal());
        // A conditional-disaggregation bypass pins the decode worker alone, by instance ID only
        // (docs/kv-routing.md): the frontend runs the whole request there.
        boolean bypass = selection.prefillReason() == SelectionReason.CONDITIONAL_BYPASS;
        if (decode.rankDeclared() && !bypass) {
            headers.put(DP_RANK, Long.toString(decode.dpRank()));
        }
        WorkerPin prefill = selection.prefill();
        if (prefill != null) {
            headers.put(PREFILL_INSTANCE_ID, prefill.worker().decimal());
            disclosed.put(DISCLOSED_PREFILL, prefill.worker().decimal());
            if (prefill.rankDeclared()) {
                headers.put(PREFILL_DP_RANK, Long.toString(prefill.dpRank()));
            }
        }
        RoutingPath path = prefill != null ? RoutingPath.PREFILL_THEN_DECODE : RoutingPath.UNIFIED;
        Selection.Dispatch dispatch = selection.dispatch();
        return new DispatchPlan(pool, headers, disclosed, path.label(), PREFILL_REFUSAL, REFUSAL_CODE, outcome -> {
            dispatch.ended();
            metrics.ended(path, outcome);
        });
    }
}
