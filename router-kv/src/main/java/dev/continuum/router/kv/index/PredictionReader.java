package dev.continuum.router.kv.index;

import dev.continuum.router.shim.OverlapScores;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.StampedLock;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * The lock-free read side of {@link PredictedBlocks}: a lookup walks the prompt's blocks under the overlay's
 * optimistic stamp and keeps its answer only when the stamp validates (else retries a few times, then answers
 * nothing from the overlay, counted). Every loop over the arrays is bounded and every id range-checked, so a torn
 * read in a race is thrown away by the validation.
 *
 * <p>Two kinds of owner: this replica's own predictions, a contiguous chain of path keys matched block by block;
 * and a peer's ({@link SampledChain}), keys at sampled positions only, each standing for the whole prefix up to it,
 * so the deepest sampled position a prompt shares is the peer's depth.
 */
final class PredictionReader {
    private static final int READ_ATTEMPTS = 8;

    /** The overlay's per-owner arrays the walk reads (the writers' own, shared: never copied). */
    record Owners(long[] worker, int[] rank, int[] peer, long[] ttl) {
    }

    /** One reader thread's depths per owner, reset by a generation stamp instead of clearing. */
    private static final class Walk {
        final int[] depth = new int[PredictedBlocks.MAX_OWNERS];
        final int[] gen = new int[PredictedBlocks.MAX_OWNERS];
        final int[] touched = new int[PredictedBlocks.MAX_OWNERS];
        final long[] worker = new long[PredictedBlocks.MAX_OWNERS];
        final int[] rank = new int[PredictedBlocks.MAX_OWNERS];
        /** The prompt's sample as the peers' chain passes its positions, for the sender ({@link SampleMemo}). */
        final long[] sampled = new long[SampledChain.MAX_KEYS];
        int touchedCount;
        int generation;

        void reset() {
            touchedCount = 0;
            if (++generation == 0) {
                java.util.Arrays.fill(gen, 0);
                generation = 1;
            }
        }

        /** Owner o seen for the first time in this walk: remembers who it is. */
        void first(int o, Owners owners) {
            gen[o] = generation;
            worker[o] = owners.worker[o];
            rank[o] = owners.rank[o];
            touched[touchedCount++] = o;
        }
    }

    private final long rootPath;
    private final LongSupplier clock;
    private final StampedLock lock;
    private final PredictionTable table;
    private final Owners owners;
    private final IntSupplier peerOwners;
    private final SampleMemo sampledByWalk;
    private final ThreadLocal<Walk> walks = ThreadLocal.withInitial(Walk::new);
    private final LongAdder contendedReads = new LongAdder();

    PredictionReader(long rootPath, LongSupplier clock, StampedLock lock, PredictionTable table, Owners owners,
            IntSupplier peerOwners, SampleMemo sampledByWalk) {
        this.rootPath = rootPath;
        this.clock = clock;
        this.lock = lock;
        this.table = table;
        this.owners = owners;
        this.peerOwners = peerOwners;
        this.sampledByWalk = sampledByWalk;
    }

    long contendedReads() {
        return contendedReads.sum();
    }

    void deepen(long[] tokensHashes, OverlapScores out) {
        if (tokensHashes.length == 0) {
            return;
        }
        Walk w = walks.get();
        for (int attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
            long stamp = lock.tryOptimisticRead();
            if (stamp == 0) {
                Thread.onSpinWait();
                continue;
            }
            boolean walked;
            try {
                walked = walk(tokensHashes, w, clock.getAsLong(), out);
            } catch (RuntimeException raced) { // a torn read; the stamp will not validate
                walked = false;
            }
            if (lock.validate(stamp) && walked) {
                for (int i = 0; i < w.touchedCount; i++) {
                    int o = w.touched[i];
                    out.raise(w.worker[o], w.rank[o], w.depth[o]);
                }
                return;
            }
        }
        contendedReads.increment();
    }

    /**
     * A rank's own predicted chain continues below what the index ({@code held}) already gives it: kv-events confirm
     * a chain's first blocks before its last, and confirmed blocks leave the overlay.
     */
    private boolean walk(long[] hashes, Walk w, long now, OverlapScores held) {
        w.reset();
        long[] k = table.keys;
        int[] own = table.owners;
        long[] st = table.stamps;
        if (k == null || own == null || st == null) {
            return true;
        }
        int deepestHeld = 0;
        for (int i = 0; i < held.size(); i++) {
            deepestHeld = Math.max(deepestHeld, held.matchedBlocks(i));
        }
        long path = rootPath;
        for (int i = 0; i < hashes.length; i++) {
            path = ChildTable.step(path, hashes[i]);
            if (ownStep(path, i, w, now, k, own, st, held) == 0 && i >= deepestHeld) {
                break;
            }
        }
        // Peers' samples sit at every MIN_STRIDE-th block only, and any of them may hold one: to the prompt's end.
        // The chain is the one this prompt's own sample carries: its keys go to the sender, which then need not
        // chain the prompt again when this replica dispatches it.
        if (peerOwners.getAsInt() > 0) {
            int stride = SampledChain.stride(hashes.length);
            int want = Math.min(hashes.length / stride, SampledChain.MAX_KEYS);
            int n = 0;
            int sampleAt = stride;
            long wire = SampledChain.root();
            for (int end = SampledChain.MIN_STRIDE; end <= hashes.length; end += SampledChain.MIN_STRIDE) {
                wire = SampledChain.next(wire, hashes, end - SampledChain.MIN_STRIDE);
                if (end == sampleAt && n < want) {
                    w.sampled[n++] = wire;
                    sampleAt += stride;
                }
                sampledHits(SampledChain.tableKey(rootPath, wire), end, w, now, k, own, st);
            }
            sampledByWalk.put(hashes, w.sampled, n);
        }
        return true;
    }

    /** Advances the own chains that reach block {@code i} (path key {@code path}); how many did. */
    private int ownStep(long path, int i, Walk w, long now, long[] k, int[] own, long[] st, OverlapScores held) {
        int mask = k.length - 1;
        int advanced = 0;
        for (int s = PredictionTable.home(path, mask), probes = 0; own[s] != 0 && probes < k.length;
                s = (s + 1) & mask, probes++) {
            if (k[s] != path) {
                continue;
            }
            int o = own[s] - 1;
            if (o < 0 || o >= PredictedBlocks.MAX_OWNERS || owners.peer[o] != 0 || now - st[s] > owners.ttl[o]) {
                continue;
            }
            if (w.gen[o] != w.generation) {
                // First seen at this depth: it continues a chain from the root, or one the index holds.
                if (i == 0 || held.matchedBlocksOf(owners.worker[o], owners.rank[o]) >= i) {
                    w.first(o, owners);
                    w.depth[o] = i + 1;
                    advanced++;
                }
            } else if (w.depth[o] == i) {
                w.depth[o] = i + 1;
                advanced++;
            }
        }
        return advanced;
    }

    /** Raises to {@code depth} every peer owner holding the sampled {@code key} (a whole prefix: no chain check). */
    private void sampledHits(long key, int depth, Walk w, long now, long[] k, int[] own, long[] st) {
        int mask = k.length - 1;
        for (int s = PredictionTable.home(key, mask), probes = 0; own[s] != 0 && probes < k.length;
                s = (s + 1) & mask, probes++) {
            int o = own[s] - 1;
            if (k[s] != key || o < 0 || o >= PredictedBlocks.MAX_OWNERS || owners.peer[o] == 0
                    || now - st[s] > owners.ttl[o]) {
                continue;
            }
            if (w.gen[o] != w.generation) {
                w.first(o, owners);
            }
            w.depth[o] = depth; // positions come shallowest first
        }
    }
}
