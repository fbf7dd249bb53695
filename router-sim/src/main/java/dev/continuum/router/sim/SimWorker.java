package dev.continuum.router.sim;

import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * One simulated Dynamo worker: its identity in the fleet, its kv_metrics publisher and its request-driven load
 * ({@link WorkerLoad}: slots, a queue and KV blocks per data-parallel rank), which the frontend moves and the
 * publisher reports, one sample per rank.
 *
 * <p>Misbehaviour is scripted per worker: {@link #silence()} stops its kv_metrics (it still serves), and
 * {@link #stall()} freezes its requests (accepted, nothing emitted) until {@link #resume()}.
 *
 * <p>With {@link SimKv} on, a prefill or aggregated worker also keeps a prefix cache per rank and publishes
 * kv-events ({@link WorkerKv}).
 */
public final class SimWorker {
    private final long instanceId;
    private final String name;
    private final Pool pool;
    private final KvMetricsPublisher publisher;
    private final WorkerLoad load;
    private final @Nullable WorkerKv kv;
    private volatile boolean silenced;

    SimWorker(long instanceId, String name, Pool pool, KvMetricsPublisher publisher, WorkerLoad load,
            @Nullable WorkerKv kv) {
        this.instanceId = instanceId;
        this.name = name;
        this.pool = pool;
        this.publisher = publisher;
        this.load = load;
        this.kv = kv;
    }

    /**
     * The ID its store gives it (compare unsigned): a random u64 in the file store, its lease ID in etcd,
     * {@code hash_pod_name(name)} on Kubernetes.
     */
    public long instanceId() {
        return instanceId;
    }

    /** A DNS-1123 name, unique in the fleet: the Pod and DynamoWorkerMetadata name on Kubernetes. */
    public String name() {
        return name;
    }

    public DirectFrontend.Role role() {
        return pool.role();
    }

    /** {@code prefill}, {@code decode} or, for an aggregated worker, {@code backend} (unless the pool says). */
    public String component() {
        return pool.component();
    }

    public String namespace() {
        return pool.namespace();
    }

    public String model() {
        return pool.model();
    }

    public int dpSize() {
        return pool.dpSize();
    }

    public Pool pool() {
        return pool;
    }

    public long publisherId() {
        return publisher.publisherId();
    }

    /** The PUB socket's address, {@code tcp://127.0.0.1:<port>}. */
    public String kvMetricsEndpoint() {
        return publisher.endpoint();
    }

    /** How many kv_metrics samples this worker has published so far (one per rank per interval). */
    public long publishedSamples() {
        return publisher.published();
    }

    /** Requests it holds: running and queued. */
    public int inFlight() {
        return load.held();
    }

    public int running() {
        return load.running();
    }

    /** Requests waiting for a free slot. */
    public int queued() {
        return load.queued();
    }

    /** KV blocks in use on {@code rank}, as its next sample reports them. */
    public long kvUsedBlocks(int rank) {
        return load.kvUsedBlocks(rank);
    }

    /** KV blocks in use over all ranks. */
    public long kvUsedBlocks() {
        long sum = 0;
        for (int r = 0; r < load.dpSize(); r++) {
            sum += load.kvUsedBlocks(r);
        }
        return sum;
    }

    /** Stops publishing kv_metrics; requests are still served. */
    public void silence() {
        silenced = true;
    }

    /** Publishes kv_metrics again (the sequence continues where it stopped). */
    public void unsilence() {
        silenced = false;
    }

    public boolean silenced() {
        return silenced;
    }

    /** Accepts requests but emits nothing (no head, no token) until {@link #resume()}: an unanswered request. */
    public void stall() {
        load.stall();
    }

    /** Ends a stall: the frozen requests continue. */
    public void resume() {
        load.resume();
    }

    public boolean stalled() {
        return load.stalled();
    }

    WorkerLoad load() {
        return load;
    }

    /**
     * Called on the fleet's single publishing thread only: one sample per rank, unless silenced. {@code now} is
     * on the KV clock ({@link KvServing#now}); it dates the prefill backlog when that is reported.
     */
    void publish(long now) {
        if (silenced) {
            return;
        }
        for (int rank = 0; rank < load.dpSize(); rank++) {
            long blocks = load.kvUsedBlocks(rank);
            Long prefill = kv != null && kv.reportsPrefillBacklog() ? kv.pendingPrefillTokens(rank, now) : null;
            // A prefill worker holds KV only while prefilling: it reports no decode blocks.
            publisher.publish(instanceId, rank, pool.role() == DirectFrontend.Role.PREFILL ? 0 : blocks, prefill,
                    blocks);
        }
    }

    DirectFrontend.Worker asFrontendWorker() {
        return new DirectFrontend.Worker(instanceId, pool.role(), pool.dpSize(), pool.namespace() + "/" + pool.model());
    }

    KvMetricsPublisher publisher() {
        return publisher;
    }

    @Nullable WorkerKv kv() {
        return kv;
    }

    /** True when this worker keeps a prefix cache and publishes kv-events. */
    public boolean hasKvCache() {
        return kv != null;
    }

    /** Its kv-events PUB socket's address, when it keeps a prefix cache. */
    public Optional<String> kvEventsEndpoint() {
        return kv == null ? Optional.empty() : Optional.of(kv.endpoint());
    }

    /** Its kv-events publisher's ID (the event channel's {@code instance_id}), when it keeps a prefix cache. */
    public Optional<Long> kvEventsPublisherId() {
        return kv == null ? Optional.empty() : Optional.of(kv.publisherId());
    }

    /** kv-events messages sent so far (0 without a prefix cache). */
    public long publishedKvEvents() {
        return kv == null ? 0 : kv.published();
    }

    /** Blocks cached on {@code rank} (0 without a prefix cache). */
    public int cachedBlocks(int rank) {
        return kv == null ? 0 : kv.cachedBlocks(rank);
    }

    /** Empties its prefix caches; each rank that held blocks publishes {@code cleared}. */
    public void clearKvCache() {
        if (kv != null) {
            kv.clear();
        }
    }

    /** Requests, prompt and cached tokens and simulated times to first token so far (empty without a cache). */
    public Optional<KvStats> kvStats() {
        if (kv == null) {
            return Optional.empty();
        }
        ServeCounters.Stats s = kv.stats();
        return Optional.of(new KvStats(s.requests(), s.promptTokens(), s.cachedTokens(), s.ttftNanos()));
    }

    /**
     * What a worker's prefix cache has served.
     *
     * @param ttftNanos each request's simulated time to first token, in serving order
     */
    public record KvStats(long requests, long promptTokens, long cachedTokens, long[] ttftNanos) {
    }
}
