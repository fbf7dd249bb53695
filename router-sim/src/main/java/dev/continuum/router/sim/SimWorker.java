package dev.continuum.router.sim;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One simulated Dynamo worker: its identity in the fleet, its kv_metrics publisher and its in-flight request
 * count, which the frontend moves and the publisher reports.
 */
public final class SimWorker {
    /** KV blocks one in-flight request holds: a 1,024-token sequence at the fleet's 16-token blocks. */
    static final int BLOCKS_PER_REQUEST = 64;

    private final long instanceId;
    private final DirectFrontend.Role role;
    private final String component;
    private final KvMetricsPublisher publisher;
    private final AtomicInteger inFlight = new AtomicInteger();

    SimWorker(long instanceId, DirectFrontend.Role role, String component, KvMetricsPublisher publisher) {
        this.instanceId = instanceId;
        this.role = role;
        this.component = component;
        this.publisher = publisher;
    }

    /** The random u64 a file-store process picks at start-up (compare unsigned). */
    public long instanceId() {
        return instanceId;
    }

    public DirectFrontend.Role role() {
        return role;
    }

    /** {@code prefill}, {@code decode} or, for an aggregated worker, {@code backend}. */
    public String component() {
        return component;
    }

    public long publisherId() {
        return publisher.publisherId();
    }

    /** The PUB socket's address, {@code tcp://127.0.0.1:<port>}. */
    public String kvMetricsEndpoint() {
        return publisher.endpoint();
    }

    /** How many kv_metrics samples this worker has published so far. */
    public long publishedSamples() {
        return publisher.published();
    }

    public int inFlight() {
        return inFlight.get();
    }

    void started() {
        inFlight.incrementAndGet();
    }

    void finished() {
        // Never below zero, even if a frontend reported an end it did not start.
        inFlight.updateAndGet(n -> Math.max(0, n - 1));
    }

    /** Called on the fleet's single publishing thread only. */
    void publish() {
        long blocks = (long) inFlight.get() * BLOCKS_PER_REQUEST;
        publisher.publish(instanceId, role == DirectFrontend.Role.PREFILL ? 0 : blocks, blocks);
    }

    DirectFrontend.Worker asFrontendWorker() {
        return new DirectFrontend.Worker(instanceId, role, 1);
    }

    KvMetricsPublisher publisher() {
        return publisher;
    }
}
