package dev.continuum.router.kv.events;

/**
 * The decoded {@code RouterEvent}s of one kv-events message, in primitive arrays reused from message to
 * message (one instance per decoding thread), so decoding allocates nothing. Filled by
 * {@link KvEventDecoder}; read by the index writer. Not thread-safe.
 */
public final class KvEvents {
    /** Events one message may carry; more are dropped as malformed. */
    public static final int MAX_EVENTS = 128;
    /** Blocks (stored or removed) one message may carry over all its events. */
    public static final int MAX_BLOCKS = 8192;

    /** What an event does. */
    public enum Kind { STORED, REMOVED, CLEARED }

    final long[] workerId = new long[MAX_EVENTS];
    final long[] eventId = new long[MAX_EVENTS];
    final long[] dpRank = new long[MAX_EVENTS];
    final boolean[] indexable = new boolean[MAX_EVENTS];
    final Kind[] kind = new Kind[MAX_EVENTS];
    final boolean[] hasParent = new boolean[MAX_EVENTS];
    final long[] parentHash = new long[MAX_EVENTS];
    final int[] blockFrom = new int[MAX_EVENTS];
    final int[] blockCount = new int[MAX_EVENTS];
    final long[] blockHashes = new long[MAX_BLOCKS];
    final long[] tokensHashes = new long[MAX_BLOCKS];
    int size;
    int blocks;
    int malformed;

    void clear() {
        size = 0;
        blocks = 0;
        malformed = 0;
    }

    /** Events decoded whole. */
    public int size() {
        return size;
    }

    /** Records dropped as malformed (bad fields, past the message's bounds, or an unreadable remainder). */
    public int malformed() {
        return malformed;
    }

    /** The publishing worker's instance ID (u64 bits). */
    public long workerId(int i) {
        return workerId[i];
    }

    /** The event's {@code event_id} (u64 bits: compare with {@link Long#compareUnsigned}). */
    public long eventId(int i) {
        return eventId[i];
    }

    /** The event's {@code dp_rank}, 0..2^32-1. */
    public long dpRank(int i) {
        return dpRank[i];
    }

    /** Whether the event is for the device tier of the worker's own residency (the only one indexed). */
    public boolean indexable(int i) {
        return indexable[i];
    }

    public Kind kind(int i) {
        return kind[i];
    }

    /** A {@code stored} event anchored at an engine block ({@code parent_hash} not nil). */
    public boolean hasParent(int i) {
        return hasParent[i];
    }

    public long parentHash(int i) {
        return parentHash[i];
    }

    /** Where the event's blocks start in {@link #blockHashes()} / {@link #tokensHashes()}. */
    public int blockFrom(int i) {
        return blockFrom[i];
    }

    public int blockCount(int i) {
        return blockCount[i];
    }

    /** Engine {@code block_hash}es (stored) or {@code block_hashes} (removed); the shared array, not a copy. */
    public long[] blockHashes() {
        return blockHashes;
    }

    /** {@code tokens_hash} of each stored block; the shared array, not a copy. */
    public long[] tokensHashes() {
        return tokensHashes;
    }
}
