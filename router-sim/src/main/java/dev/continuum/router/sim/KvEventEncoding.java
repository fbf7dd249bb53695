package dev.continuum.router.sim;

import org.jspecify.annotations.Nullable;

/**
 * The msgpack payloads of the {@code kv-events} topic, written as upstream's serde encodes its {@code RouterEvent}
 * (ai-dynamo/dynamo {@code lib/kv-router/src/protocols.rs}): a named map {@code {worker_id, storage_tier, event}},
 * the event a named map {@code {event_id, data, dp_rank}}, and {@code data} the externally tagged
 * {@code KvCacheEventData}: {@code {"stored": {parent_hash, start_position, blocks}}},
 * {@code {"removed": {block_hashes}}}, or the bare string {@code "cleared"} (a unit variant). Every hash is a u64.
 * A simulated worker's cache lives on the GPU, so {@code storage_tier} is always {@code "device"}.
 *
 * <p>Public for the router's end-to-end tests, which need kv-events written by something other than the router's
 * own decoder's reading of the layout.
 */
public final class KvEventEncoding {
    static final String TOPIC = "kv-events";

    private KvEventEncoding() {
    }

    /**
     * A {@code stored} event for blocks {@code from..to-1} of a chain.
     *
     * @param parent      the sequence hash of block {@code from - 1}, or null when {@code from} is the root's child
     * @param seqHashes   the chain's sequence hashes (the engine's {@code block_hash})
     * @param tokenHashes the chain's per-block token hashes ({@code tokens_hash}, what a router indexes)
     */
    public static byte[] stored(long workerId, long eventId, int dpRank, @Nullable Long parent, long[] seqHashes,
            long[] tokenHashes, int from, int to) {
        return event(workerId, eventId, dpRank, p -> {
            p.packMapHeader(1);
            p.packString("stored");
            p.packMapHeader(3);
            p.packString("parent_hash");
            if (parent == null) {
                p.packNil();
            } else {
                EventPublisher.packU64(p, parent);
            }
            // The later field: where the batch's first block sits in the sequence, for positional indexers.
            p.packString("start_position");
            p.packLong(from);
            p.packString("blocks");
            p.packArrayHeader(to - from);
            for (int i = from; i < to; i++) {
                p.packMapHeader(3);
                p.packString("block_hash");
                EventPublisher.packU64(p, seqHashes[i]);
                p.packString("tokens_hash");
                EventPublisher.packU64(p, tokenHashes[i]);
                p.packString("mm_extra_info");
                p.packNil();
            }
        });
    }

    /** A {@code removed} event for {@code hashes[from..to-1]} (sequence hashes). */
    public static byte[] removed(long workerId, long eventId, int dpRank, long[] hashes, int from, int to) {
        return event(workerId, eventId, dpRank, p -> {
            p.packMapHeader(1);
            p.packString("removed");
            p.packMapHeader(1);
            p.packString("block_hashes");
            p.packArrayHeader(to - from);
            for (int i = from; i < to; i++) {
                EventPublisher.packU64(p, hashes[i]);
            }
        });
    }

    /** A {@code cleared} event: every block of the rank is gone. */
    public static byte[] cleared(long workerId, long eventId, int dpRank) {
        return event(workerId, eventId, dpRank, p -> p.packString("cleared"));
    }

    private static byte[] event(long workerId, long eventId, int dpRank, EventPublisher.Body data) {
        return EventPublisher.pack(p -> {
            p.packMapHeader(3);
            p.packString("worker_id");
            EventPublisher.packU64(p, workerId);
            p.packString("storage_tier");
            p.packString("device");
            p.packString("event");
            p.packMapHeader(3);
            p.packString("event_id");
            EventPublisher.packU64(p, eventId);
            p.packString("data");
            data.write(p);
            p.packString("dp_rank");
            p.packLong(dpRank);
        });
    }
}
