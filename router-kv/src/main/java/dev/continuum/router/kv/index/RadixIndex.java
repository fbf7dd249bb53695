package dev.continuum.router.kv.index;

import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.OverlapScores;
import dev.continuum.router.shim.PrefixOverlap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.StampedLock;

/**
 * The device-tier radix index of every admitted rank's KV blocks: one writer, any number of lock-free readers.
 *
 * <p><b>Structure.</b> Node 0 is the root; every other node is one token block reached from its parent, keyed
 * by the block's {@code tokens_hash} (the hash the router computes for a prompt, so a lookup walks the same
 * keys). Nodes live in parallel primitive arrays indexed by an int id (path key, parent, child count, owners:
 * {@link NodeStore}); children are found through one open-addressing table ({@link ChildTable}) keyed by the
 * child's path key (a mix of its parent's path key and its {@code tokens_hash}, see {@link ChildTable#step})
 * whose slots hold the key itself, the link and the child's owners in summary, three adjacent longs (path
 * key, {@code parent id << 32 | child id}, one bit per owning rank id below {@value #RANK_BITS}), so a lookup
 * step reads one slot, whose place it computes from the request alone, and intersects its candidates with one
 * AND. A node's owners are also
 * a sorted {@code long[]} of {@code rank id << 32 | reference count}: the count says how many of the rank's
 * engine {@code block_hash}es name this node, and a lookup reads these arrays only on a path that holds a
 * rank id past the bits. Each rank ({@link RankRegistry}) has a primitive map from engine {@code block_hash} to
 * node id, used to anchor a stored chain at its {@code parent_hash} and to find the node of a removal. Freed node
 * ids (and their owner arrays) are reused, so a steady stream of stores and removals allocates nothing. This
 * class keeps the three in step (a node's owners, its slot's owner summary, the ranks' maps) and runs the
 * concurrency protocol below; the lookup itself is {@link PrefixWalk}.
 *
 * <p><b>Concurrency.</b> Only the writer thread calls the mutating methods; each mutation (one event, one
 * clear) runs under the write mode of a {@link StampedLock}, which readers never take: a reader walks the
 * arrays under an optimistic stamp, writes its answer, and keeps it only if the stamp still validates (no
 * write started meanwhile), so every answer reflects the index between two whole events. A reader that
 * raced a write says so (a shared count of retrying readers) and retries once the write ends, for at most
 * {@value #READ_BUDGET_NANOS} ns, then answers with no overlap (counted); before each write the writer
 * holds off at most {@value #YIELD_NANOS} ns while that count is above zero, so a flood of events cannot
 * starve lookups. Neither side takes a lock the other holds. Torn reads during a race are bounded (every
 * id and length is range-checked, every probe loop is bounded) and thrown away by the validation.
 */
public final class RadixIndex implements PrefixOverlap {
    /**
     * Blocks one write step stores, removes or clears at most: a racing reader waits for one section, not a whole
     * event.
     */
    static final int WRITE_SECTION_BLOCKS = 64;
    /** {@link #storeSection}'s answer when a ceiling refused a block (node ids are never negative). */
    private static final int OVER_CAPACITY = Integer.MIN_VALUE;
    static final int READ_ATTEMPTS = 8;
    /** How long a reader that raced a write keeps trying before it answers with no overlap. */
    static final long READ_BUDGET_NANOS = 200_000;
    /** The longest the writer holds off its next write while readers that raced one are retrying. */
    static final long YIELD_NANOS = 20_000;
    /**
     * Ranks below this id are summarised in each child slot as one bit each, so a lookup step intersects its
     * candidate ranks with one AND on the slot it already read; bit 63 ({@link #OVERFLOW}) says the node also
     * has an owner with a larger id, and a walk meeting it falls back to merging the sorted owner arrays.
     */
    static final int RANK_BITS = 63;
    static final long OVERFLOW = 1L << 63;

    /** What a stored chain came to. */
    public enum StoreOutcome { STORED, OVER_CAPACITY, UNKNOWN_PARENT }

    private final IndexLimits limits;
    /** The root's path key: unpredictable per index, so a publisher cannot aim its chains at one probe run. */
    private final long rootPath = new java.security.SecureRandom().nextLong();
    private final StampedLock lock = new StampedLock();
    private final LongAdder contendedReads = new LongAdder();
    /** Readers retrying after a race with the writer; the writer gives them a gap before its next write. */
    private final AtomicInteger retrying = new AtomicInteger();
    /** Each reader thread's walk and scratch arrays. */
    private final ThreadLocal<PrefixWalk> walks;
    private final NodeStore nodeStore;
    private final ChildTable childTable;
    private final RankRegistry rankRegistry;
    // Writer-only.
    private int ownerships;
    private volatile int publishedNodes;
    private volatile int publishedOwnerships;

    public RadixIndex(IndexLimits limits) {
        this.limits = limits;
        nodeStore = new NodeStore(1024, rootPath, limits);
        childTable = new ChildTable(2048);
        rankRegistry = new RankRegistry(16);
        ChildTable table = childTable;
        NodeStore store = nodeStore;
        RankRegistry registry = rankRegistry;
        long root = rootPath;
        int cap = limits.maxOwnersPerNode();
        walks = ThreadLocal.withInitial(() -> new PrefixWalk(table, store, registry, root, cap));
    }

    public IndexLimits limits() {
        return limits;
    }

    /** Live nodes, the root not counted (any thread; as of the last whole mutation). */
    public int nodes() {
        return publishedNodes;
    }

    /** (rank, block) ownerships over all ranks (any thread). */
    public int ownerships() {
        return publishedOwnerships;
    }

    /** Lookups that raced writes {@value #READ_ATTEMPTS} times and answered with no overlap. */
    public long contendedReads() {
        return contendedReads.sum();
    }

    /** The root's path key: {@link PredictedBlocks} keys a prompt's first block from it, as a lookup does. */
    long rootPath() {
        return rootPath;
    }

    // ---------------------------------------------------------------- writer side

    /**
     * The path key of the block {@code rank} holds under engine hash {@code blockHash}, the root's when
     * {@code hasParent} is false; {@code missing} when the rank holds no such block. Writer thread only.
     */
    long pathOf(int rank, boolean hasParent, long blockHash, long missing) {
        if (!hasParent) {
            return rootPath;
        }
        int node = rankRegistry.blocks(rank).get(blockHash);
        return node == LongIntMap.MISSING ? missing : nodeStore.path(node);
    }

    /** Ranks held (admitted and not yet removed); writer thread only. */
    public int ranks() {
        return rankRegistry.held();
    }

    /** A new rank id for (worker, dp_rank); writer thread only. */
    public int addRank(long workerId, int dpRank) {
        yieldToReaders();
        long stamp = lock.writeLock();
        try {
            return rankRegistry.add(workerId, dpRank);
        } finally {
            lock.unlockWrite(stamp);
        }
    }

    /**
     * Clears the blocks of the first {@code n} of {@code ranks} and frees their ids, all in one step for
     * readers (a departed worker leaves whole); writer thread only.
     */
    public void removeRanks(int[] ranks, int n) {
        yieldToReaders();
        long stamp = lock.writeLock();
        try {
            for (int i = 0; i < n; i++) {
                int rank = ranks[i];
                clearLocked(rank);
                rankRegistry.free(rank);
            }
        } finally {
            publish();
            lock.unlockWrite(stamp);
        }
    }

    /** Engine block hashes the rank holds; writer thread only. */
    public int blocksOf(int rank) {
        LongIntMap m = rankRegistry.blocks(rank);
        return m == null ? 0 : m.size();
    }

    /**
     * Drops every block of {@code rank} (a {@code cleared} event, or a gap); writer thread only. The rank's engine
     * hashes are forgotten at once (only this thread reads them) and its ownerships released in write sections of
     * {@link #WRITE_SECTION_BLOCKS}, so a reader racing the clear of a large rank retries for one section, not the
     * whole clear. Between sections readers see part of the rank's blocks: never credit it did not hold.
     */
    public void clearRank(int rank) {
        LongIntMap held = rankRegistry.blocks(rank);
        if (held == null || held.size() == 0) {
            return;
        }
        rankRegistry.resetBlocks(rank);
        LongIntMap.Entry release = (blockHash, node) -> {
            ownerships--;
            releaseOwner(node, rank);
        };
        int cursor = 0;
        while (cursor >= 0) {
            yieldToReaders();
            long stamp = lock.writeLock();
            try {
                cursor = held.forEachFrom(cursor, WRITE_SECTION_BLOCKS, release);
            } finally {
                publish();
                lock.unlockWrite(stamp);
            }
        }
    }

    /**
     * Stores a chain of {@code count} blocks for {@code rank}: the first block's parent is the root when
     * {@code hasParent} is false, else the node the rank holds under engine hash {@code parentHash}. Blocks
     * before a refusal stay stored. Writer thread only.
     *
     * <p>A long chain is written in sections of at most {@link #WRITE_SECTION_BLOCKS} blocks, each its own write
     * step, so a reader racing a large event retries for one section's time, not the whole event's; between
     * sections a reader may see a prefix of the chain, which is a correct, shorter match.
     */
    public StoreOutcome store(int rank, boolean hasParent, long parentHash, long[] blockHashes,
                              long[] tokensHashes, int from, int count) {
        int parent = NodeStore.ROOT;
        int at = from;
        int end = from + count;
        do {
            int n = Math.min(WRITE_SECTION_BLOCKS, end - at);
            int last;
            yieldToReaders();
            long stamp = lock.writeLock();
            try {
                if (at == from && hasParent) {
                    // Only this thread writes, so the node found here stays the chain's parent across sections.
                    parent = rankRegistry.blocks(rank).get(parentHash);
                    if (parent == LongIntMap.MISSING) {
                        return StoreOutcome.UNKNOWN_PARENT;
                    }
                }
                last = storeSection(rank, parent, blockHashes, tokensHashes, at, n);
            } finally {
                publish();
                lock.unlockWrite(stamp);
            }
            if (last == OVER_CAPACITY) {
                return StoreOutcome.OVER_CAPACITY;
            }
            parent = last;
            at += n;
        } while (at < end);
        return StoreOutcome.STORED;
    }

    /** Removes the rank's blocks by engine hash, in write sections as {@link #store}; unknown hashes are ignored. */
    public void remove(int rank, long[] blockHashes, int from, int count) {
        int end = from + count;
        for (int at = from; at < end; at += WRITE_SECTION_BLOCKS) {
            yieldToReaders();
            long stamp = lock.writeLock();
            try {
                LongIntMap map = rankRegistry.blocks(rank);
                for (int i = at, stop = Math.min(end, at + WRITE_SECTION_BLOCKS); i < stop; i++) {
                    int node = map.remove(blockHashes[i]);
                    if (node != LongIntMap.MISSING) {
                        ownerships--;
                        releaseOwner(node, rank);
                    }
                }
            } finally {
                publish();
                lock.unlockWrite(stamp);
            }
        }
    }

    /** Stores blocks {@code from..from+count-1} under {@code parent}; the last block's node, or OVER_CAPACITY. */
    private int storeSection(int rank, int parent, long[] blockHashes, long[] tokensHashes, int from, int count) {
        LongIntMap map = rankRegistry.blocks(rank);
        for (int i = from; i < from + count; i++) {
            long blockHash = blockHashes[i];
            long tokensHash = tokensHashes[i];
            int child = findChild(parent, tokensHash);
            int held = map.get(blockHash);
            if (held != LongIntMap.MISSING) {
                if (held == child) {
                    parent = child; // stored again: already in place
                    continue;
                }
                // The engine reused the hash for another block: move it.
                map.remove(blockHash);
                ownerships--;
                releaseOwner(held, rank);
                child = findChild(parent, tokensHash); // the release may have freed it
            }
            if (map.size() >= limits.maxBlocksPerRank() || ownerships >= limits.maxOwnerships()) {
                return OVER_CAPACITY;
            }
            boolean created = false;
            if (child == 0) {
                if (nodeStore.live() >= limits.maxNodes()) {
                    return OVER_CAPACITY;
                }
                child = newNode(parent, tokensHash);
                created = true;
            }
            if (!addOwner(child, rank)) {
                if (created) {
                    freeIfUnused(child);
                }
                return OVER_CAPACITY;
            }
            map.put(blockHash, child);
            ownerships++;
            parent = child;
        }
        return parent;
    }

    private void clearLocked(int rank) {
        LongIntMap map = rankRegistry.blocks(rank);
        if (map == null || map.size() == 0) {
            return;
        }
        ownerships -= map.size();
        map.forEach((blockHash, node) -> releaseOwner(node, rank));
        map.clear();
    }

    private void publish() {
        publishedNodes = nodeStore.live();
        publishedOwnerships = ownerships;
    }

    /** Adds one reference of {@code rank} to {@code node}; false when the node has its most owners. */
    private boolean addOwner(int node, int rank) {
        int added = nodeStore.addOwner(node, rank);
        if (added == NodeStore.ADDED) {
            childTable.addOwnerBits(node, nodeStore.path(node), rank < RANK_BITS ? 1L << rank : OVERFLOW);
        }
        return added != NodeStore.FULL;
    }

    /** Drops one reference of {@code rank} from {@code node}, then frees what became unused. */
    private void releaseOwner(int node, int rank) {
        if (!nodeStore.dropOwner(node, rank)) {
            return;
        }
        if (rank < RANK_BITS) {
            childTable.clearOwnerBits(node, nodeStore.path(node), 1L << rank);
        } else if (nodeStore.largestOwner(node) < RANK_BITS) {
            // the last owner past the bits left
            childTable.clearOwnerBits(node, nodeStore.path(node), OVERFLOW);
        }
        freeIfUnused(node);
    }

    /** Frees {@code node} and then each ancestor left with neither owners nor children. */
    private void freeIfUnused(int node) {
        while (nodeStore.unused(node)) {
            int parent = nodeStore.parent(node);
            childTable.unlink(node, nodeStore.path(node));
            nodeStore.release(node);
            node = parent;
        }
    }

    private int newNode(int parent, long tokensHash) {
        long path = ChildTable.step(nodeStore.path(parent), tokensHash);
        int id = nodeStore.allocate(parent, path);
        childTable.link(parent, id, path);
        return id;
    }

    /** {@code parent}'s child for {@code tokensHash}, or 0 when it has none. */
    private int findChild(int parent, long tokensHash) {
        return childTable.find(parent, ChildTable.step(nodeStore.path(parent), tokensHash));
    }

    // ---------------------------------------------------------------- read side

    /**
     * Each rank's longest contiguous prefix of {@code hashes} (the request's per-block {@code tokens_hash}
     * values, from the first block), deepest first. Lock-free, allocation-free at steady state (a per-thread
     * scratch of {@code maxOwnersPerNode} ints is made once per thread); see the class comment for how a
     * reader gets a consistent view.
     */
    @Override
    public void findMatches(BlockHashes hashes, OverlapScores out) {
        long[] keys = hashes.hashes();
        PrefixWalk walk = walks.get();
        if (tryWalk(keys, walk, out)) {
            return;
        }
        // Raced a write: announce it, so the writer leaves a gap after its current write, and retry in it.
        retrying.incrementAndGet();
        try {
            long deadline = System.nanoTime() + READ_BUDGET_NANOS;
            for (int attempt = 1; attempt < READ_ATTEMPTS || System.nanoTime() < deadline; attempt++) {
                while (lock.isWriteLocked() && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                if (tryWalk(keys, walk, out)) {
                    return;
                }
                if (System.nanoTime() >= deadline) {
                    break;
                }
            }
        } finally {
            retrying.decrementAndGet();
        }
        out.clear();
        contendedReads.increment();
    }

    /** One optimistic walk, kept only if no write started meanwhile. */
    private boolean tryWalk(long[] keys, PrefixWalk walk, OverlapScores out) {
        long stamp = lock.tryOptimisticRead();
        if (stamp == 0) {
            return false;
        }
        out.clear();
        boolean walked;
        try {
            walked = walk.walk(keys, out);
        } catch (RuntimeException raced) { // a torn read in a race; the stamp will not validate
            walked = false;
        }
        return lock.validate(stamp) && walked;
    }

    /**
     * Writer side, before each write: while readers that raced a write are retrying, wait (at most
     * {@value #YIELD_NANOS} ns) so a stream of writes cannot starve lookups. The writer waits on no lock.
     */
    private void yieldToReaders() {
        if (retrying.get() == 0) {
            return;
        }
        long deadline = System.nanoTime() + YIELD_NANOS;
        while (retrying.get() != 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
    }
}
