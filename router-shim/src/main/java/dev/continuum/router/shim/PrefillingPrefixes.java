package dev.continuum.router.shim;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.jspecify.annotations.Nullable;

/**
 * The prompts one (worker, dp_rank) is prefilling for this router right now: up to {@link #SLOTS} of its
 * sequences between dispatch and first token, each as its block hashes and its uncached tokens. A pick asks how
 * many of those tokens a new request shares ({@link #sharedTokens}): that part of the rank's prefill backlog is
 * work the request would otherwise repeat elsewhere, not work it adds here (docs/kv-routing.md, "In-flight
 * prefixes"). Without it a burst sharing a new prefix ties every idle rank against the one prefilling the prefix
 * and is spread over the fleet, each rank prefilling the same prefix once.
 *
 * <p>Lock-free and allocation-free once the slots exist (allocated by the rank's first hashed prefill): a slot is
 * claimed by a compare-and-set of its hashes from null; when all are taken the one with the fewest tokens makes room for a
 * larger prefill (the replaced prefill only loses its discount, which errs toward counting the backlog in full). Readers validate a
 * slot's hashes before and after reading its tokens, so a slot rewritten under them is skipped. A slot is freed at
 * the sequence's first token or end by a compare-and-set from its own hashes (the {@link BlockHashes} instance is
 * the request's own, so another request never frees it).
 */
final class PrefillingPrefixes {
    /** Concurrent prefills remembered per rank; a burst sharing one prefix needs only the first. */
    static final int SLOTS = 4;

    private static final VarHandle HASHES = MethodHandles.arrayElementVarHandle(BlockHashes[].class);
    private static final VarHandle TOKENS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle SLOTS_REF;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            SLOTS_REF = lookup.findVarHandle(PrefillingPrefixes.class, "slots", Slots.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** A slot being written (never a request's hashes: it has no blocks). */
    private static final BlockHashes CLAIMING = new BlockHashes(0, new long[0]);

    private static final class Slots {
        final BlockHashes[] hashes = new BlockHashes[SLOTS];
        final long[] tokens = new long[SLOTS];
    }

    @SuppressWarnings("FieldMayBeFinal") // written through SLOTS_REF
    private volatile @Nullable Slots slots;

    /** Remembers a prefill of {@code tokens} uncached tokens over the blocks {@code hashes}. */
    void started(BlockHashes hashes, long tokens) {
        if (tokens <= 0 || hashes.blocks() == 0) {
            return;
        }
        Slots s = slots();
        for (int i = 0; i < SLOTS; i++) {
            if (HASHES.getVolatile(s.hashes, i) == null && claim(s, i, null, hashes, tokens)) {
                return;
            }
        }
        // Every slot is taken: the smallest remembered prefill makes room for a larger one (a burst's followers,
        // which prefill only their own suffix, never push out the prefix they share).
        int smallest = -1;
        long fewest = tokens;
        for (int i = 0; i < SLOTS; i++) {
            BlockHashes old = (BlockHashes) HASHES.getAcquire(s.hashes, i);
            long t = (long) TOKENS.getAcquire(s.tokens, i);
            if (old != null && old != CLAIMING && t < fewest) {
                smallest = i;
                fewest = t;
            }
        }
        if (smallest >= 0) {
            BlockHashes old = (BlockHashes) HASHES.getAcquire(s.hashes, smallest);
            if (old != null && old != CLAIMING) {
                claim(s, smallest, old, hashes, tokens); // lost to a concurrent claim: that one is remembered
            }
        }
    }

    /** Forgets the prefill over {@code hashes} (its first token came, or it ended); nothing if it was replaced. */
    void ended(BlockHashes hashes) {
        Slots s = slots;
        if (s == null) {
            return;
        }
        for (int i = 0; i < SLOTS; i++) {
            if (HASHES.getVolatile(s.hashes, i) == hashes) {
                HASHES.compareAndSet(s.hashes, i, hashes, (BlockHashes) null);
            }
        }
    }

    /**
     * The uncached tokens of one remembered prefill that a request with block hashes {@code request} shares within
     * its first {@code overlap} blocks (the depth the rank is known or predicted to hold), the largest over the
     * slots; 0 when none.
     */
    long sharedTokens(BlockHashes request, int overlap) {
        return overlap <= 0 ? 0 : scan(request, overlap, true);
    }

    /** The most leading blocks {@code request} shares with one remembered prefill (0 when none). */
    int sharedBlocks(BlockHashes request) {
        return (int) scan(request, request.blocks(), false);
    }

    /**
     * One scan of the slots: the largest, over the remembered prefills, of the leading blocks {@code request} shares
     * with one within its first {@code limit} blocks, or with {@code tokens} of the uncached tokens of that prefill
     * those blocks cover. Each hash chains its block to all before it, so the common prefix is a binary search.
     */
    private long scan(BlockHashes request, int limit, boolean tokens) {
        Slots s = slots;
        if (s == null) {
            return 0;
        }
        long best = 0;
        for (int i = 0; i < SLOTS; i++) {
            BlockHashes h = (BlockHashes) HASHES.getAcquire(s.hashes, i);
            if (h == null || h == CLAIMING || h == request || h.blockSize() != request.blockSize()) {
                continue;
            }
            int n = commonPrefix(h.hashes(), request.hashes(), Math.min(limit, Math.min(h.blocks(), request.blocks())));
            if (n == 0) {
                continue;
            }
            long value = n;
            if (tokens) {
                long held = (long) TOKENS.getAcquire(s.tokens, i);
                if (HASHES.getAcquire(s.hashes, i) != h) {
                    continue; // replaced while read
                }
                value = Math.min(held, (long) n * request.blockSize());
            }
            best = Math.max(best, value);
        }
        return best;
    }

    /**
     * The length of the common prefix of {@code a} and {@code b} within {@code limit} blocks. Each hash chains its
     * block to all before it, so equal hashes at a position mean equal prefixes up to it: a binary search.
     */
    static int commonPrefix(long[] a, long[] b, int limit) {
        int lo = 0;
        int hi = limit;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (a[mid - 1] == b[mid - 1]) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    private static boolean claim(Slots s, int i, @Nullable BlockHashes expected, BlockHashes hashes, long tokens) {
        // The slot is held by CLAIMING while its tokens change, so a reader never pairs the new hashes with the
        // old tokens, and two writers never write one slot's tokens at once.
        if (!HASHES.compareAndSet(s.hashes, i, expected, CLAIMING)) {
            return false;
        }
        TOKENS.setRelease(s.tokens, i, tokens);
        HASHES.setRelease(s.hashes, i, hashes);
        return true;
    }

    private Slots slots() {
        Slots s = slots;
        if (s != null) {
            return s;
        }
        Slots fresh = new Slots();
        Slots won = (Slots) SLOTS_REF.compareAndExchange(this, (Slots) null, fresh);
        return won == null ? fresh : won;
    }
}
