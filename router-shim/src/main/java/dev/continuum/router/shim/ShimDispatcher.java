package dev.continuum.router.shim;

import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.proxy.prompts.ChatRewrite;
import dev.continuum.router.proxy.DispatchHook;
import dev.continuum.router.proxy.DispatchPlan;
import dev.continuum.router.proxy.DispatchRequest;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.shim.decisions.DecisionLog;
import dev.continuum.router.shim.decisions.DecisionSettings;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The disaggregated orchestrator's Dynamo path, as core's {@link DispatchHook}: for a chat completion whose
 * candidates include a usable shim replica, it runs the picker over the namespaces with such a replica and
 * returns a plan that sends the request to the winner namespace's pool with the picker's {@code x-dynamo-*}
 * headers (instance IDs in unsigned decimal, which is all {@code dynamo.frontend} accepts; rank headers
 * whenever the card declares {@code data_parallel_size}, including rank 0). The body keeps the client's
 * model ID; {@code dynamo.shim.model_map} applies to candidate matching only.
 *
 * <p>It runs the whole dispatch, one way: with a {@link PromptStage} installed (KV routing on), a chat request's
 * prompt is asked of the stage first, and the picker gets its {@link PromptBlocks} or the stage's
 * {@link PromptFallback}; a stage that needs the encoder answers {@link PromptStage.Pending}, and the dispatcher
 * then answers {@link DispatchHook.Later} and picks where the prompt was encoded. The picker reads the prefix
 * overlap through {@link PrefixOverlap}; nothing here knows the KV pipeline or its index.
 *
 * <p>Install with {@code proxyService.dispatchHook(dispatcher)}. The picker and stage are replaced together at
 * run time ({@link #use}); the snapshot and config suppliers are read on every request, so a registry update or
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

    private static final Logger log = LoggerFactory.getLogger(ShimDispatcher.class);

    private final Supplier<DynamoSnapshot> snapshots;
    private final Supplier<ShimConfig> config;
    private volatile Routing routing;
    private final DisaggregatedMetrics metrics;
    private volatile @Nullable Offer lastOffer;
    /** Where routed requests' decisions are recorded, or null (no records, no decision-id header). */
    private volatile @Nullable DecisionRecorder decisions;
    private volatile SessionAffinity sessions = SessionAffinity.NONE;
    /** Handed to the stage on every ask; one object, so an ask allocates nothing for it. */
    private final PromptStage.FirstReplica firstReplica = this::firstReplicaRewrite;

    /** The picker and the prompt stage, replaced together so a request never sees one without the other. */
    private record Routing(DynamoWorkerPicker picker, @Nullable PromptStage prompts) {
        Routing {
            Objects.requireNonNull(picker, "picker");
        }
    }

    private ShimDispatcher(Supplier<DynamoSnapshot> snapshots, Supplier<ShimConfig> config, DynamoWorkerPicker picker,
            DisaggregatedMetrics metrics) {
        this.snapshots = Objects.requireNonNull(snapshots, "snapshots");
        this.config = Objects.requireNonNull(config, "config");
        this.routing = new Routing(picker, null);
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
        return routing.picker();
    }

    /** The prompt stage chat requests are asked of, or null (load-only dispatch). */
    public @Nullable PromptStage promptStage() {
        return routing.prompts();
    }

    /**
     * Replaces the picker and the prompt stage for requests that start afterwards: the KV-aware picker with the KV
     * prompt stage, or the load-based picker without one ({@code prompts} null).
     */
    public void use(DynamoWorkerPicker picker, @Nullable PromptStage prompts) {
        routing = new Routing(picker, prompts);
    }

    /**
     * Records every routed request's decision in {@code log} from now on (its {@code dynamo.decisions} settings
     * are read per request) and answers its id in {@code x-continuum-decision-id}.
     */
    public void recordDecisions(DecisionLog log) {
        decisions = new DecisionRecorder(log, System::currentTimeMillis);
    }

    /**
     * Binds the sessions of requests carrying {@code x-dynamo-session-id} through {@code affinity} from now on: a
     * turn goes to its session's decode rank while that rank is a candidate and not stalled.
     */
    public void sessions(SessionAffinity affinity) {
        sessions = java.util.Objects.requireNonNull(affinity, "affinity");
    }

    /** The worker model name for a client model ID under the live {@code dynamo.shim.model_map}. */
    public String workerModel(String clientModel) {
        return config.get().workerModel(clientModel);
    }

    /**
     * Without a prompt stage, or for a request that is not a chat body (a passthrough, pinned by model alone), the
     * plan now. Otherwise the stage is asked first: a fallback plans now, with its reason for the picker; a pending
     * prompt answers {@link DispatchHook.Later}, planned where the prompt is encoded.
     */
    @Override
    public DispatchHook.@Nullable Answer plan(DispatchRequest request) {
        PromptStage stage = routing.prompts();
        if (stage == null || !request.chatBody()) {
            return plan(request, null, null);
        }
        PromptStage.Answer prompt = stage.prepare(request, workerModel(request.model()), firstReplica);
        if (prompt instanceof PromptFallback fallback) {
            return plan(request, null, fallback.selectionResult());
        }
        // The replicas' rewrites are read here, on the request's loop; the plan is made on the stage's thread, and
        // it reads only the request's routing fields, never its borrowed body.
        Map<String, ChatRewrite> replicas = replicaRewrites(request);
        ChatRewrite rendered = replicas.isEmpty() ? ChatRewrite.NONE : replicas.values().iterator().next();
        return new DispatchHook.Later(((PromptStage.Pending) prompt).prompt()
                .thenApply(outcome -> planPrompted(request, outcome, replicas, rendered)));
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

    /** Runs where the stage completed the prompt (its own threads), never on an event loop. */
    private @Nullable DispatchPlan planPrompted(DispatchRequest request, PromptOutcome outcome,
            Map<String, ChatRewrite> replicas, ChatRewrite rendered) {
        if (!(outcome instanceof PromptBlocks prompt)) {
            return plan(request, null, ((PromptFallback) outcome).selectionResult());
        }
        DispatchPlan plan = plan(request, prompt);
        PromptBlocks.TokenData tokenData = prompt.tokenData();
        if (plan == null || tokenData == null || !sameRewrite(plan, replicas, rendered)) {
            return plan;
        }
        try {
            return plan.withPinnedBody(tokenData.body());
        } catch (IOException | RuntimeException e) {
            log.warn("nvext.token_data not attached: {}", LogSafe.escape(e));
            return plan;
        }
    }

    /**
     * Whether every backend of the plan receives the body that was rendered: the pinned body replaces each replica's
     * own rewrite, so replicas that need different rewrites get no {@code token_data} (their rewrites then apply).
     */
    private static boolean sameRewrite(DispatchPlan plan, Map<String, ChatRewrite> replicas, ChatRewrite rendered) {
        for (String b : plan.backends()) {
            if (!rendered.equals(replicas.get(b))) {
                return false;
            }
        }
        return true;
    }

    /** The rewrite of each usable backend that is a shim replica, in the request's candidate order. */
    private Map<String, ChatRewrite> replicaRewrites(DispatchRequest request) {
        List<String> replicas = offer(config.get(), snapshots.get().namespaces(), request.usableBackends()).replicas();
        Map<String, ChatRewrite> out = new LinkedHashMap<>();
        for (String b : replicas) {
            out.put(b, request.rewrites().forBackend(b));
        }
        return out;
    }

    /** The rewrite the first usable shim replica's body gets, from the cached offer (allocates nothing). */
    private ChatRewrite firstReplicaRewrite(DispatchRequest request) {
        List<String> replicas = offer(config.get(), snapshots.get().namespaces(), request.usableBackends()).replicas();
        return replicas.isEmpty() ? ChatRewrite.NONE : request.rewrites().forBackend(replicas.get(0));
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
        DecisionRecorder recorder = decisions;
        DecisionSettings recording = recorder == null ? null : recorder.begin();
        String session = SessionAffinity.sessionId(request.sessionId());
        SessionAffinity affinity = sessions;
        PickRequest pick = new PickRequest(shim.workerModel(request.model()), offer.namespaces(),
                request.estimatedPromptTokens(), prompt, fallback, session == null ? null : affinity.bound(session));
        Selection selection = routing.picker().pick(snapshot, pick);
        if (session != null && selection != null) {
            affinity.bind(session, selection.decode());
        }
        long decisionId = recorder == null || recording == null || selection == null ? -1
                : recorder.commit(recording, pick, selection);
        if (selection == null) {
            DecisionRecorder.disarm();
            return null;
        }
        List<String> pool = offer.pools().get(selection.namespace());
        if (pool == null) {
            // A picker that ignored the offered namespaces: never send a pin to another graph's frontend.
            selection.dispatch().ended(SequenceEnd.CANCELLED);
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
        DispatchPlan plan = new DispatchPlan(pool, pins, disclosed(decode, prefill), path.label(),
                PREFILL_REFUSAL, REFUSAL_CODE,
                new PlanEnding(dispatch, path, metrics, recorder == null ? null : recorder.log(), decisionId));
        return decisionId < 0 ? plan : plan.withDecisionId(Long.toString(decisionId));
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
        Map<String, List<String>> configured = shim.poolsByNamespace(namespaces);
        for (Map.Entry<String, List<String>> pool : configured.entrySet()) {
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
        List<String> replicas = new ArrayList<>();
        for (String b : usableBackends) {
            for (List<String> pool : configured.values()) {
                if (pool.contains(b)) {
                    replicas.add(b);
                    break;
                }
            }
        }
        Offer next = new Offer(shim, List.copyOf(namespaces), List.copyOf(usableBackends),
                Collections.unmodifiableMap(pools), Set.copyOf(pools.keySet()), List.copyOf(replicas));
        lastOffer = next;
        return next;
    }

    /**
     * The namespaces a request may be pinned in, the usable replicas of each, and every usable shim replica in the
     * request's candidate order (the first one's body is the prompt a stage renders); immutable.
     */
    private record Offer(ShimConfig shim, List<String> configuredNamespaces, List<String> usableBackends,
            Map<String, List<String>> pools, Set<String> namespaces, List<String> replicas) {
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
