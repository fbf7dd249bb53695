package dev.continuum.router.kv.index;

import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.OverlapScores;
import dev.continuum.router.shim.PrefixOverlap;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.StampedLock;

/**
 * The device-tier radix index of every admitted rank's KV blocks: one writer, any number of lock-free readers.
 *
 * <p><b>Structure.</b> Node 0 is the root; every other node is one token block reached from its parent, keyed
 * by the block's {@code tokens_hash} (the hash the router computes for a prompt, so a lookup walks the same
 * keys). Nodes live in parallel primitive arrays indexed by an int id (hash, parent, child count, owners);
 * children are found through one open-addressing table keyed by the child's path key (a mix of its
 * parent's path key and its {@code tokens_hash}, see {@link #step}) whose slots hold the key itself, the
 * link and the child's owners in summary, three adjacent longs (path key, {@code parent id << 32 | child
 * id}, one bit per owning rank id below {@value #RANK_BITS}), so a lookup step reads one slot, whose place
 * it computes from the request alone, and intersects its candidates with one AND. A node's owners are also
 * a sorted {@code long[]} of {@code rank id << 32 | reference count}: the count says how many of the rank's
 * engine {@code block_hash}es name this node, and a lookup reads these arrays only on a path that holds a
 * rank id past the bits. Each rank has a primitive map from engine {@code block_hash} to node id, used to
 * anchor a stored chain at its {@code parent_hash} and to find the node of a removal. Freed node ids (and
 * their owner arrays) are reused, so a steady stream of stores and removals allocates nothing.
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
    static final int ROOT = 0;
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
    static final int SLOT = 3;
    /** Thrown by a reader that read an impossible id in a race; preallocated, the race is expected. */
    private static final IllegalStateException TORN = new IllegalStateException("torn read during a write");

    /** What a stored chain came to. */
    public enum StoreOutcome { STORED, OVER_CAPACITY, UNKNOWN_PARENT }

    private final IndexLimits limits;
    /** The root's path key: unpredictable per index, so a publisher cannot aim its chains at one probe run. */
    private final long rootPath = new java.security.SecureRandom().nextLong();
    private final StampedLock lock = new StampedLock();
    private final LongAdder contendedReads = new LongAdder();
    /** Readers retrying after a race with the writer; the writer gives them a gap before its next write. */
    private final AtomicInteger retrying = new AtomicInteger();
    private final ThreadLocal<Scratch> scratch;

    // Nodes, by id (0 = root). Reader-visible.
    /** Each node's path key: {@link #step} folded from the root's seed over the tokens_hash of its prefix. */
    private long[] nodePath;
    private int[] nodeParent;
    private int[] ownerCount;
    private long[][] owners;
    // Writer-only node state.
    private int[] childCount;
    private int[] freeNodes;
    private int freeTop;
    private int nextNode = 1;
    private int liveNodes;
    /**
     * Children by path key: slot i is {@code children[3i]} = the child's path key, {@code children[3i+1]} =
     * parent id << 32 | child id (0 = empty: the root is never a child) and {@code children[3i+2]} = the
     * child's owner summary (see {@link #RANK_BITS}). At most 3/4 full. Reader-visible.
     */
    private long[] children;
    private int childMask;

    // Ranks, by id. Reader-visible identity.
    private long[] rankWorker;
    private int[] rankDp;
    // Writer-only rank state.
    private LongIntMap[] rankBlocks;
    private int[] freeRanks;
    private int freeRankTop;
    private int nextRank;
    private int ownerships;
    private volatile int publishedNodes;
    private volatile int publishedOwnerships;

    public RadixIndex(IndexLimits limits) {
        this.limits = limits;
        int n = 1024;
        nodePath = new long[n];
        nodeParent = new int[n];
        ownerCount = new int[n];
        owners = new long[n][];
        childCount = new int[n];
        freeNodes = new int[64];
        children = new long[SLOT * 2048];
        childMask = 2048 - 1;
        rankWorker = new long[16];
        rankDp = new int[16];
        rankBlocks = new LongIntMap[16];
        freeRanks = new int[16];
        nodeParent[ROOT] = -1;
        nodePath[ROOT] = rootPath;
        int cap = limits.maxOwnersPerNode();
        scratch = ThreadLocal.withInitial(() -> new Scratch(cap));
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

    // ---------------------------------------------------------------- writer side

    /** Ranks held (admitted and not yet removed); writer thread only. */
    public int ranks() {
        return nextRank - freeRankTop;
    }

    /** A new rank id for (worker, dp_rank); writer thread only. */
    public int addRank(long workerId, int dpRank) {
        yieldToReaders();
        long stamp = lock.writeLock();
        try {
            int id;
            if (freeRankTop > 0) {
                id = freeRanks[--freeRankTop];
            } else {
                id = nextRank++;
                if (id == rankWorker.length) {
                    int n = id * 2;
                    rankWorker = Arrays.copyOf(rankWorker, n);
                    rankDp = Arrays.copyOf(rankDp, n);
                    rankBlocks = Arrays.copyOf(rankBlocks, n);
                }
            }
            rankWorker[id] = workerId;
            rankDp[id] = dpRank;
            if (rankBlocks[id] == null) {
                rankBlocks[id] = new LongIntMap();
            }
            return id;
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
                rankBlocks[rank] = null; // a departed rank's (possibly large) map goes with it
                if (freeRankTop == freeRanks.length) {
                    freeRanks = Arrays.copyOf(freeRanks, freeRanks.length * 2);
                }
                freeRanks[freeRankTop++] = rank;
            }
        } finally {
            publish();
            lock.unlockWrite(stamp);
        }
    }

    /** Engine block hashes the rank holds; writer thread only. */
    public int blocksOf(int rank) {
        LongIntMap m = rankBlocks[rank];
        return m == null ? 0 : m.size();
    }

    /**
     * Drops every block of {@code rank} (a {@code cleared} event, or a gap); writer thread only. The rank's engine
     * hashes are forgotten at once (only this thread reads them) and its ownerships released in write sections of
     * {@link #WRITE_SECTION_BLOCKS}, so a reader racing the clear of a large rank retries for one section, not the
     * whole clear. Between sections readers see part of the rank's blocks: never credit it did not hold.
     */
    public void clearRank(int rank) {
        LongIntMap held = rankBlocks[rank];
        if (held == null || held.size() == 0) {
            return;
        }
        rankBlocks[rank] = new LongIntMap();
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
        int parent = ROOT;
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
                    parent = rankBlocks[rank].get(parentHash);
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
                LongIntMap map = rankBlocks[rank];
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
        LongIntMap map = rankBlocks[rank];
        for (int i = from; i < from + count; i++) {
            long blockHash = blockHashes[i];
            long tokensHash = tokensHashes[i];
            int child = findChildWriter(parent, tokensHash);
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
                child = findChildWriter(parent, tokensHash); // the release may have freed it
            }
            if (map.size() >= limits.maxBlocksPerRank() || ownerships >= limits.maxOwnerships()) {
                return OVER_CAPACITY;
            }
            boolean created = false;
            if (child == 0) {
                if (liveNodes >= limits.maxNodes()) {
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
        LongIntMap map = rankBlocks[rank];
        if (map == null || map.size() == 0) {
            return;
        }
        ownerships -= map.size();
        map.forEach((blockHash, node) -> releaseOwner(node, rank));
        map.clear();
    }

    private void publish() {
        publishedNodes = liveNodes;
        publishedOwnerships = ownerships;
    }

    /** Adds one reference of {@code rank} to {@code node}; false when the node has its most owners. */
    private boolean addOwner(int node, int rank) {
        long[] list = owners[node];
        int n = ownerCount[node];
        int at = search(list, n, rank);
        if (at >= 0) {
            list[at]++;
            return true;
        }
        if (n >= limits.maxOwnersPerNode()) {
            return false;
        }
        int insert = -at - 1;
        if (list == null || n == list.length) {
            long[] grown = new long[list == null ? 2 : Math.min(list.length * 2, limits.maxOwnersPerNode())];
            if (list != null) {
                System.arraycopy(list, 0, grown, 0, n);
            }
            owners[node] = grown;
            list = grown;
        }
        System.arraycopy(list, insert, list, insert + 1, n - insert);
        list[insert] = ((long) rank << 32) | 1;
        ownerCount[node] = n + 1;
        children[SLOT * slotOf(node) + 2] |= rank < RANK_BITS ? 1L << rank : OVERFLOW;
        return true;
    }

    /** Drops one reference of {@code rank} from {@code node}, then frees what became unused. */
    private void releaseOwner(int node, int rank) {
        long[] list = owners[node];
        int n = ownerCount[node];
        int at = search(list, n, rank);
        if (at < 0) {
            return;
        }
        if ((int) list[at] > 1) {
            list[at]--;
            return;
        }
        System.arraycopy(list, at + 1, list, at, n - at - 1);
        ownerCount[node] = n - 1;
        int slot = SLOT * slotOf(node) + 2;
        if (rank < RANK_BITS) {
            children[slot] &= ~(1L << rank);
        } else if (n == 1 || (int) (list[n - 2] >>> 32) < RANK_BITS) {
            children[slot] &= ~OVERFLOW; // the sorted list's largest id left was the last one past the bits
        }
        freeIfUnused(node);
    }

    private static int search(long[] list, int n, int rank) {
        int lo = 0;
        int hi = n - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int r = (int) (list[mid] >>> 32);
            if (r < rank) {
                lo = mid + 1;
            } else if (r > rank) {
                hi = mid - 1;
            } else {
                return mid;
            }
        }
        return -(lo + 1);
    }

    /** Frees {@code node} and then each ancestor left with neither owners nor children. */
    private void freeIfUnused(int node) {
        while (node != ROOT && ownerCount[node] == 0 && childCount[node] == 0) {
            int parent = nodeParent[node];
            unlinkChild(node);
            childCount[parent]--;
            nodeParent[node] = -1;
            if (freeTop == freeNodes.length) {
                freeNodes = Arrays.copyOf(freeNodes, freeNodes.length * 2);
            }
            freeNodes[freeTop++] = node;
            liveNodes--;
            node = parent;
        }
    }

    private int newNode(int parent, long tokensHash) {
        int id;
        if (freeTop > 0) {
            id = freeNodes[--freeTop];
        } else {
            id = nextNode++;
            if (id == nodePath.length) {
                int n = (int) Math.min(id * 2L, limits.maxNodes() + 1L); // ids never pass the ceiling
                nodePath = Arrays.copyOf(nodePath, n);
                nodeParent = Arrays.copyOf(nodeParent, n);
                ownerCount = Arrays.copyOf(ownerCount, n);
                owners = Arrays.copyOf(owners, n);
                childCount = Arrays.copyOf(childCount, n);
            }
        }
        long path = step(nodePath[parent], tokensHash);
        nodePath[id] = path;
        nodeParent[id] = parent;
        ownerCount[id] = 0;
        childCount[id] = 0;
        childCount[parent]++;
        liveNodes++;
        if (liveNodes > (childMask + 1) / 4 * 3) {
            rehashChildren((childMask + 1) * 2);
        }
        int i = home(path, childMask);
        while (children[SLOT * i + 1] != 0) {
            i = (i + 1) & childMask;
        }
        children[SLOT * i] = path;
        children[SLOT * i + 1] = ((long) parent << 32) | id;
        children[SLOT * i + 2] = 0;
        return id;
    }

    /**
     * The path key of a parent's child: a bijective 64-bit mix (so two children of one parent never share a
     * key). A lookup computes every step's key from the request alone, so the slot each step reads does not
     * depend on what the previous step read and the processor can fetch several steps' slots at once.
     */
    static long step(long parentPath, long tokensHash) {
        long z = parentPath ^ tokensHash;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    private static int home(long path, int mask) {
        return (int) (path ^ (path >>> 32)) & mask;
    }

    private int findChildWriter(int parent, long tokensHash) {
        long[] table = children;
        long path = step(nodePath[parent], tokensHash);
        for (int i = home(path, childMask); ; i = (i + 1) & childMask) {
            long link = table[SLOT * i + 1];
            if (link == 0) {
                return 0;
            }
            if (table[SLOT * i] == path && (int) (link >>> 32) == parent) {
                return (int) link;
            }
        }
    }

    /** The child-table slot of live {@code node}. */
    private int slotOf(int node) {
        int mask = childMask;
        long[] table = children;
        int i = home(nodePath[node], mask);
        while ((int) table[SLOT * i + 1] != node) {
            i = (i + 1) & mask;
        }
        return i;
    }

    /** Removes {@code node}'s slot, shifting later entries of its probe run back (no tombstones). */
    private void unlinkChild(int node) {
        int mask = childMask;
        long[] table = children;
        int hole = slotOf(node);
        int i = hole;
        while (true) {
            i = (i + 1) & mask;
            long link = table[SLOT * i + 1];
            if (link == 0) {
                table[SLOT * hole + 1] = 0;
                table[SLOT * hole] = 0;
                table[SLOT * hole + 2] = 0;
                return;
            }
            int home = home(table[SLOT * i], mask);
            boolean stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
            if (!stays) {
                table[SLOT * hole] = table[SLOT * i];
                table[SLOT * hole + 1] = link;
                table[SLOT * hole + 2] = table[SLOT * i + 2];
                hole = i;
            }
        }
    }

    private void rehashChildren(int capacity) {
        long[] table = new long[SLOT * capacity];
        int mask = capacity - 1;
        for (int j = 0; j < children.length; j += SLOT) {
            long link = children[j + 1];
            if (link != 0) {
                int i = home(children[j], mask);
                while (table[SLOT * i + 1] != 0) {
                    i = (i + 1) & mask;
                }
                table[SLOT * i] = children[j];
                table[SLOT * i + 1] = link;
                table[SLOT * i + 2] = children[j + 2];
            }
        }
        childMask = mask;
        children = table;
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
        Scratch s = scratch.get();
        if (tryWalk(keys, s, out)) {
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
                if (tryWalk(keys, s, out)) {
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
    private boolean tryWalk(long[] keys, Scratch s, OverlapScores out) {
        long stamp = lock.tryOptimisticRead();
        if (stamp == 0) {
            return false;
        }
        out.clear();
        boolean walked;
        try {
            walked = walk(keys, s, out);
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

    /**
     * One optimistic walk; false when what it read cannot be a whole state (a race). Candidates are a bit set
     * of rank ids, intersected at each step with the child slot's owner summary; a node with an owner id past
     * the bits hands the walk to {@link #mergeWalk}.
     */
    private boolean walk(long[] keys, Scratch s, OverlapScores out) {
        // Read every array reference once: the writer may replace them while growing.
        long[] table = children;
        long[] workers = rankWorker;
        int[] dps = rankDp;
        int mask = table.length / SLOT - 1;
        int nodes = Math.min(ownerCount.length, owners.length);
        long[] droppedBits = s.droppedBits;
        int[] droppedDepth = s.droppedDepth;
        long candidates = 0;
        int dropped = 0;
        int node = ROOT;
        long path = rootPath;
        int depth = 0;
        for (; depth < keys.length; depth++) {
            path = step(path, keys[depth]);
            int at = probe(table, mask, path, node);
            if (at < 0) {
                break;
            }
            int child = (int) table[SLOT * at + 1];
            long bits = table[SLOT * at + 2];
            if (child <= 0 || child >= nodes) {
                throw TORN; // only in a race: the stamp will not validate
            }
            if (bits < 0) { // OVERFLOW: an owner id past the bits
                return mergeWalk(keys, s, out);
            }
            if (bits == 0) {
                break;
            }
            if (depth == 0) {
                candidates = bits;
            } else {
                long lost = candidates & ~bits;
                if (lost != 0) {
                    if (dropped == droppedBits.length) {
                        throw TORN; // each drop loses a rank: more than RANK_BITS drops is a torn read
                    }
                    droppedBits[dropped] = lost;
                    droppedDepth[dropped++] = depth;
                    candidates &= bits;
                    if (candidates == 0) {
                        break;
                    }
                }
            }
            node = child;
        }
        // Deepest first: the survivors (ascending id), then each drop from the last to the first (descending
        // id within one), the order the merge walk emits.
        int ranks = Math.min(workers.length, dps.length);
        for (long c = candidates; c != 0; c &= c - 1) {
            if (!emit(out, Long.numberOfTrailingZeros(c), depth, workers, dps, ranks)) {
                return true;
            }
        }
        for (int k = dropped - 1; k >= 0; k--) {
            for (long c = droppedBits[k]; c != 0; c &= ~Long.highestOneBit(c)) {
                if (!emit(out, 63 - Long.numberOfLeadingZeros(c), droppedDepth[k], workers, dps, ranks)) {
                    return true;
                }
            }
        }
        return true;
    }

    /**
     * A reader's lookup of {@code node}'s child at {@code path} in a table it read once: the slot, or -1. Bounded
     * by the table's size, so a table the writer is changing cannot hold a reader in the loop.
     */
    private static int probe(long[] table, int mask, long path, int node) {
        for (int i = home(path, mask), probes = 0; probes <= mask; i = (i + 1) & mask, probes++) {
            long link = table[SLOT * i + 1];
            if (link == 0) {
                return -1;
            }
            if (table[SLOT * i] == path && (int) (link >>> 32) == node) {
                return i;
            }
        }
        return -1;
    }

    /** The walk for paths holding rank ids past the bits: a sorted merge of the owner arrays at each step. */
    private boolean mergeWalk(long[] keys, Scratch s, OverlapScores out) {
        out.clear();
        int[] counts = ownerCount;
        long[][] lists = owners;
        long[] table = children;
        long[] workers = rankWorker;
        int[] dps = rankDp;
        int mask = table.length / SLOT - 1;
        int nodes = Math.min(counts.length, lists.length);
        int[] cand = s.candidates;
        int[] next = s.next;
        int candidates = 0;
        int dropped = 0;
        int node = ROOT;
        long path = rootPath;
        int depth = 0;
        for (; depth < keys.length; depth++) {
            path = step(path, keys[depth]);
            int at = probe(table, mask, path, node);
            int child = at < 0 ? 0 : (int) table[SLOT * at + 1];
            if (child < 0 || child >= nodes) {
                throw TORN; // only in a race: the stamp will not validate
            }
            if (child == 0) {
                break;
            }
            long[] list = lists[child];
            int n = list == null ? 0 : Math.min(counts[child], Math.min(list.length, cand.length));
            if (n <= 0) {
                break;
            }
            if (depth == 0) {
                for (int j = 0; j < n; j++) {
                    cand[j] = (int) (list[j] >>> 32);
                }
                candidates = n;
            } else {
                // Sorted merge: candidates missing from this node stop at this depth.
                int kept = 0;
                int j = 0;
                for (int k = 0; k < candidates; k++) {
                    int rank = cand[k];
                    while (j < n && (int) (list[j] >>> 32) < rank) {
                        j++;
                    }
                    if (j < n && (int) (list[j] >>> 32) == rank) {
                        next[kept++] = rank;
                    } else if (dropped < s.droppedRank.length) {
                        s.droppedRank[dropped] = rank;
                        s.droppedDepth[dropped++] = depth;
                    }
                }
                System.arraycopy(next, 0, cand, 0, kept);
                candidates = kept;
                if (kept == 0) {
                    break;
                }
            }
            node = child;
        }
        // Deepest first: the survivors, then the dropped ranks from the last to stop to the first.
        int ranks = Math.min(workers.length, dps.length);
        for (int k = 0; k < candidates; k++) {
            if (!emit(out, cand[k], depth, workers, dps, ranks)) {
                return true;
            }
        }
        for (int k = dropped - 1; k >= 0; k--) {
            if (!emit(out, s.droppedRank[k], s.droppedDepth[k], workers, dps, ranks)) {
                return true;
            }
        }
        return true;
    }

    private static boolean emit(OverlapScores out, int rank, int depth, long[] workers, int[] dps, int ranks) {
        if (rank < 0 || rank >= ranks) {
            throw TORN; // only in a race: the stamp will not validate
        }
        return out.add(workers[rank], dps[rank], depth);
    }

    /** One reader thread's reusable arrays. */
    private static final class Scratch {
        final int[] candidates;
        final int[] next;
        final int[] droppedRank;
        final int[] droppedDepth;
        final long[] droppedBits = new long[RANK_BITS];

        Scratch(int maxOwners) {
            candidates = new int[maxOwners];
            next = new int[maxOwners];
            droppedRank = new int[maxOwners];
            droppedDepth = new int[Math.max(maxOwners, RANK_BITS)];
        }
    }
}
