package dev.continuum.router.kv.prompt;

import dev.continuum.router.kv.hash.ByteBoundedCache;

/**
 * Token IDs of prompt segments (the text between two added tokens), keyed by a 128-bit SHA-256 prefix of the
 * tokenizer's identity and the segment's text, shared by every request of every loaded model and bounded in
 * bytes (4 per ID plus {@link #ENTRY_OVERHEAD}), least recently used first out ({@link ByteBoundedCache}).
 */
final class SegmentCache extends ByteBoundedCache<int[]> {
    SegmentCache(long maxBytes, Listener listener) {
        super(maxBytes, listener);
    }

    @Override
    protected long weigh(int[] ids) {
        return 4L * ids.length;
    }
}
