package dev.continuum.router.kv.dispatch;

import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.kv.config.KvConfig;
import dev.continuum.router.kv.index.PredictedBlocks;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.KvPickListener;
import dev.continuum.router.shim.WorkerPin;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Which KV mode each namespace runs (docs/kv-routing.md, "Which mode runs when") and the picker's feed into the
 * predicted cache. {@code dynamo.kv.mode}: {@code precise} and {@code approximate} apply to every namespace;
 * {@code auto} runs a namespace precise while a kv-events publisher is registered for it, approximate otherwise.
 *
 * <p>After each KV-scored pick ({@link #picked}) the chosen rank is predicted to hold the request's blocks: for
 * {@code approximate_ttl} in an approximate namespace (the router's picks are all its index knows), for
 * {@code predicted_ttl} in a precise one (until kv-events confirm them), within the rank's {@code total_kv_blocks}.
 * Per fleet view it keeps the namespaces with kv-events and each worker's capacity, so a pick reads two maps and
 * allocates nothing.
 */
public final class KvModes implements KvPickListener {
    /** Why a namespace runs its mode: closed labels of the gauge and the admin view. */
    public enum Reason {
        /** {@code dynamo.kv.mode} names the mode. */
        CONFIGURED("configured"),
        /** {@code auto}, and a kv-events publisher is registered for the namespace. */
        KV_EVENTS("kv_events"),
        /** {@code auto}, and none is. */
        NO_KV_EVENTS("no_kv_events");

        private final String label;

        Reason(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** One namespace's row of {@code kv_modes} in {@code GET /admin/dynamo/workers}. */
    public record NamespaceMode(String namespace, String mode, String reason) {
    }

    private record Fleet(FleetView view, Set<String> kvEvents, Map<WorkerId, Long> capacity, Set<String> namespaces,
                         Set<WorkerId> workers) {
    }

    private final Supplier<KvConfig> config;
    private final Supplier<DynamoSnapshot> snapshots;
    private final @Nullable PredictedBlocks predicted;
    private volatile Fleet fleet = new Fleet(FleetView.empty(), Set.of(), Map.of(), Set.of(), Set.of());

    /**
     * @param predicted the predicted cache the picks go to; null: none (modes are still decided and shown)
     * @param registry  where {@code continuum_dynamo_kv_mode_namespaces{mode,reason}} goes
     */
    KvModes(Supplier<KvConfig> config, Supplier<DynamoSnapshot> snapshots, @Nullable PredictedBlocks predicted,
            MeterRegistry registry) {
        this.config = config;
        this.snapshots = snapshots;
        this.predicted = predicted;
        for (boolean approximate : new boolean[] {false, true}) {
            for (Reason reason : Reason.values()) {
                if (reason == Reason.KV_EVENTS && approximate || reason == Reason.NO_KV_EVENTS && !approximate) {
                    continue;
                }
                Gauge.builder("continuum.dynamo.kv.mode.namespaces", () -> count(approximate, reason))
                        .description("Namespaces of the fleet by the KV mode they run and why")
                        .tag("mode", approximate ? "approximate" : "precise").tag("reason", reason.label())
                        .register(registry);
            }
        }
    }

    @Override
    public boolean approximate(String namespace, boolean kvEventsPublished) {
        return switch (config.get().mode()) {
            case PRECISE -> false;
            case APPROXIMATE -> true;
            case AUTO -> !kvEventsPublished;
        };
    }

    @Override
    public void picked(WorkerPin rank, BlockHashes hashes) {
        PredictedBlocks p = predicted;
        if (p == null) {
            return;
        }
        Fleet f = fleet(snapshots.get());
        String namespace = rank.worker().namespace();
        long ttl = ttlNanos(f, namespace);
        if (ttl <= 0) {
            return;
        }
        p.predict(namespace, rank.worker().instanceId(), (int) rank.dpRank(), hashes.hashes(), ttl,
                capacity(f, rank.worker()));
    }

    /** How long a prediction for {@code namespace} lives: {@code approximate_ttl} or {@code predicted_ttl}. */
    private long ttlNanos(Fleet f, String namespace) {
        KvConfig kv = config.get();
        return (approximate(namespace, f.kvEvents.contains(namespace)) ? kv.approximateTtl() : kv.predictedTtl())
                .toNanos();
    }

    private static long capacity(Fleet f, WorkerId worker) {
        Long capacity = f.capacity.get(worker);
        return capacity == null ? 0 : capacity;
    }

    /** Whether {@code namespace} runs approximate mode in the current fleet view (replica sync's sender side). */
    boolean approximate(String namespace) {
        return approximate(namespace, fleet(snapshots.get()).kvEvents.contains(namespace));
    }

    /**
     * A peer's sampled prediction (replica sync): kept while {@code worker} is in the fleet view and its namespace
     * runs approximate mode, for the same TTL and within the same capacity as this replica's own picks.
     */
    void peerPredicted(int peer, WorkerId worker, int dpRank, int stride, long[] keys) {
        PredictedBlocks p = predicted;
        Fleet f = fleet(snapshots.get());
        String namespace = worker.namespace();
        if (p == null || !f.workers.contains(worker) || !approximate(namespace, f.kvEvents.contains(namespace))) {
            return;
        }
        p.predictPeer(peer, namespace, worker.instanceId(), dpRank, stride, keys, ttlNanos(f, namespace),
                capacity(f, worker));
    }

    /** The sample keys a lookup already chained for this prompt's {@code hashes} array, taken; null: chain it. */
    long @Nullable [] sampledByWalk(long[] hashes) {
        PredictedBlocks p = predicted;
        return p == null ? null : p.sampledByWalk().take(hashes);
    }

    /** Peer {@code peer} left: its predictions go. */
    void forgetPeer(int peer) {
        PredictedBlocks p = predicted;
        if (p != null) {
            p.forgetPeer(peer);
        }
    }

    /** Each namespace of the fleet with its mode and why, by name (the admin view). */
    public List<NamespaceMode> modes() {
        Fleet f = fleet(snapshots.get());
        KvConfig.Mode mode = config.get().mode();
        List<NamespaceMode> out = new ArrayList<>();
        for (String ns : new TreeSet<>(f.namespaces)) {
            boolean published = f.kvEvents.contains(ns);
            out.add(new NamespaceMode(ns, approximate(ns, published) ? "approximate" : "precise",
                    reason(mode, published).label()));
        }
        return out;
    }

    private static Reason reason(KvConfig.Mode mode, boolean published) {
        if (mode != KvConfig.Mode.AUTO) {
            return Reason.CONFIGURED;
        }
        return published ? Reason.KV_EVENTS : Reason.NO_KV_EVENTS;
    }

    private double count(boolean approximate, Reason reason) {
        Fleet f = fleet(snapshots.get());
        KvConfig.Mode mode = config.get().mode();
        int n = 0;
        for (String ns : f.namespaces) {
            boolean published = f.kvEvents.contains(ns);
            if (approximate(ns, published) == approximate && reason(mode, published) == reason) {
                n++;
            }
        }
        return n;
    }

    /** The per-view facts, rebuilt when the fleet view changes (rare), read as they are otherwise. */
    private Fleet fleet(DynamoSnapshot snapshot) {
        Fleet current = fleet;
        FleetView view = snapshot.fleet();
        if (current.view == view) {
            return current;
        }
        Set<String> kvEvents = new HashSet<>();
        for (DynamoPublisher pub : snapshot.publishers()) {
            if (pub.topic() == PublisherTopic.KV_EVENTS) {
                kvEvents.add(pub.namespace());
            }
        }
        Map<WorkerId, Long> capacity = new HashMap<>();
        Set<String> namespaces = new HashSet<>();
        Set<WorkerId> workers = new HashSet<>();
        for (DynamoWorker w : snapshot.workers()) {
            namespaces.add(w.namespace());
            workers.add(w.id());
            Long blocks = w.capacity().totalKvBlocks();
            if (blocks != null && blocks > 0) {
                capacity.put(w.id(), blocks);
            }
        }
        Fleet built = new Fleet(view, Set.copyOf(kvEvents), Map.copyOf(capacity), Set.copyOf(namespaces),
                Set.copyOf(workers));
        fleet = built;
        return built;
    }
}
