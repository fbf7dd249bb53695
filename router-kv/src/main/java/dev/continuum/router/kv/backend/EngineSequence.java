package dev.continuum.router.kv.backend;

/**
 * The sequence numbers of one engine stream: vLLM and SGLang number each published batch from 0 as an unsigned
 * 64-bit big-endian frame. Arithmetic wraps, so the batch after {@code 2^64 - 1} is 0 and stays in order. Not
 * thread-safe: one stream's event loop owns it.
 */
final class EngineSequence {
    /** Where a batch's number stands against the one expected next. */
    enum Verdict {
        /** The first batch since the source started, or the next one expected. */
        NEXT,
        /** Batches are missing in between: {@link #missing} says how many. */
        GAP,
        /** Lower than expected: already applied (during a replay) or a restarted engine (live). */
        BEHIND
    }

    private boolean known;
    private long next;

    Verdict classify(long seq) {
        if (!known || seq == next) {
            return Verdict.NEXT;
        }
        // Compared as a distance, not by magnitude, so a wrap from 2^64 - 1 to 0 is not a restart: within half
        // the number space ahead is a gap, anything else is behind.
        return seq - next > 0 ? Verdict.GAP : Verdict.BEHIND;
    }

    /** Batches missing before {@code seq} (a {@link Verdict#GAP}); saturates at {@link Long#MAX_VALUE}. */
    long missing(long seq) {
        long d = seq - next;
        return d < 0 ? Long.MAX_VALUE : d;
    }

    /** {@code seq} was consumed (applied or dropped): the next expected is the one after it. */
    void consumed(long seq) {
        known = true;
        next = seq + 1;
    }

    boolean known() {
        return known;
    }

    long next() {
        return next;
    }
}
