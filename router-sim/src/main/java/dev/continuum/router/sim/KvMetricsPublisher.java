package dev.continuum.router.sim;

import org.jspecify.annotations.Nullable;
import org.zeromq.ZContext;

/**
 * One worker's kv_metrics publisher ({@link EventPublisher} on topic {@code kv_metrics}): one message per sample,
 * whose payload is the msgpack {@code ActiveLoad}.
 *
 * <p>Not thread-safe, as a ZMQ socket is not: one thread publishes and then closes it.
 */
final class KvMetricsPublisher implements AutoCloseable {
    static final String TOPIC = "kv_metrics";

    private final EventPublisher events;

    KvMetricsPublisher(ZContext context, long publisherId) {
        this.events = new EventPublisher(context, TOPIC, publisherId);
    }

    String endpoint() {
        return events.endpoint();
    }

    long publisherId() {
        return events.publisherId();
    }

    /** How many samples this publisher has sent so far (the next sequence number). */
    long published() {
        return events.published();
    }

    /** Publishes one sample; a subscriber that is not connected yet simply misses it, as with upstream. */
    void publish(long workerId, int dpRank, long activeDecodeBlocks, @Nullable Long activePrefillTokens,
            long kvUsedBlocks) {
        events.publish(activeLoad(workerId, dpRank, activeDecodeBlocks, activePrefillTokens, kvUsedBlocks));
    }

    @Override
    public void close() {
        events.close();
    }

    /**
     * A worker's {@code ActiveLoad}, named map in declaration order, in the later form that carries
     * {@code scheduler_load_scope} (nil from a worker) before {@code kv_used_blocks};
     * {@code active_prefill_tokens} is nil unless given (dynamo.vllm workers send nil; see {@link SimKv}).
     */
    static byte[] activeLoad(long workerId, int dpRank, long activeDecodeBlocks, long kvUsedBlocks) {
        return activeLoad(workerId, dpRank, activeDecodeBlocks, null, kvUsedBlocks);
    }

    static byte[] activeLoad(long workerId, int dpRank, long activeDecodeBlocks, @Nullable Long activePrefillTokens,
            long kvUsedBlocks) {
        return EventPublisher.pack(p -> {
            p.packMapHeader(6);
            p.packString("worker_id");
            EventPublisher.packU64(p, workerId);
            p.packString("dp_rank");
            p.packLong(dpRank);
            p.packString("active_decode_blocks");
            p.packLong(activeDecodeBlocks);
            p.packString("active_prefill_tokens");
            if (activePrefillTokens == null) {
                p.packNil();
            } else {
                p.packLong(activePrefillTokens);
            }
            p.packString("scheduler_load_scope");
            p.packNil();
            p.packString("kv_used_blocks");
            p.packLong(kvUsedBlocks);
        });
    }
}
