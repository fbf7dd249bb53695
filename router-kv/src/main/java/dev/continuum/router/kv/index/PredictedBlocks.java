package dev.continuum.router.kv.index;

import dev.continuum.router.shim.OverlapScores;
import dev.continuum.router.shim.SharedPredictions;
import java.util.concurrent.locks.StampedLock;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The router's predicted cache (docs/kv-routing.md, "Predicted cache and approximate mode"): the blocks the router
 * expects a rank to hold because it sent the rank a prompt, before (or, in approximate mode, instead of) kv-events
 * saying so. A bounded overlay beside the {@link RadixIndex}, keyed by the same path keys (the root's key, then
 * {@link ChildTable#step} per block), so a lookup walks the request's blocks as the index does and a stored
 * kv-event names the predictions it confirms.
 *
 * <p><b>Structure.</b> One open-addressing table of (path key, rank) entries, linear probing, deleted by backward
 * shift so every probe run stays contiguous; each entry carries the time it was last predicted. A rank's entries
 * live for its TTL from then (lookups ignore older ones) and at most its capacity ({@code total_kv_blocks}): each
 * rank keeps a FIFO ring of (path key, time) records, one per prediction, and pops the oldest record to make room
 * or when it is past the TTL, deleting its entry unless a later prediction refreshed it (least recently predicted
 * first, as an engine's LRU evicts). A prediction touches its blocks last to first, as an engine does, so chains lose
 * their tails first; a full ring drops its refreshed records before it evicts a live entry.
 *
 * <p><b>Bounds.</b> At most {@value #MAX_ENTRIES} entries over all ranks, the whole cache of 8 engines of 131,072
 * blocks (the table starts at {@value #FIRST_TABLE_SLOTS} slots on the first prediction and doubles while more than
 * half full, up to {@value #TABLE_SLOTS}: 20 bytes a slot, 40 MiB), {@value #MAX_OWNERS} ranks, {@value #RING_BUDGET}
 * ring records over all ranks (16 bytes each, 32 MiB), {@value #MAX_BLOCKS_PER_PREDICTION} blocks per prediction.
 * A prediction past these bounds is cut or dropped and counted, never grown.
 *
 * <p><b>Peers.</b> Replica sync's peers' predictions ({@link #predictPeer}, sampled by {@link SampledChain}) live in
 * owners of their own, one per (peer, rank), at most {@value #MAX_PEER_ENTRIES} entries each, with the same TTL,
 * LRU and departure rules; {@link #forgetPeer} takes back exactly one peer's part.
 *
 * <p><b>Concurrency.</b> Writers (the picking threads, and the kv-events writer confirming) take the write mode of a
 * {@link StampedLock}; a picking thread only tries it, briefly, and drops its prediction (counted) rather than wait.
 * Readers never lock: they walk under an optimistic stamp and keep the answer only when it validates, else retry a
 * few times and answer nothing from the overlay (counted). Every loop over the arrays is bounded, every id
 * range-checked, so a torn read in a race is thrown away by the validation.
 */
public final class PredictedBlocks {
    static final int MAX_ENTRIES = 1 << 20;
    static final int TABLE_SLOTS = MAX_ENTRIES * 2;
    /** The table's first size; it doubles while more than half full, up to {@link #TABLE_SLOTS}. */
    static final int FIRST_TABLE_SLOTS = 1 << 16;
    static final int MAX_OWNERS = 4096;
    static final int RING_BUDGET = MAX_ENTRIES * 2;
    static final int MAX_BLOCKS_PER_PREDICTION = 16_384;
    /** A peer's sampled entries per rank at most (each stands for a stride of blocks). */
    static final int MAX_PEER_ENTRIES = 1 << 16;
    private static final int MIN_RING = 64;
    private static final int TRY_LOCK_SPINS = 256;
    private static final int SWEEP_PER_PREDICTION = 4;

    /** How a prediction ended, or why one was not made; closed labels of the overlay's counter. */
    public enum Outcome {
        PREDICTED("predicted"), CONFIRMED("confirmed"), EXPIRED("expired"), EVICTED("evicted"),
        DEPARTED("departed"), DROPPED("dropped");

        private final String label;

        Outcome(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** Where the overlay counts; {@link #NONE} in tests that do not look. */
    public interface Counts {
        Counts NONE = (outcome, blocks) -> { };

        /** Adds {@code blocks} (0 or more) under {@code outcome}. */
        void count(Outcome outcome, long blocks);
    }

    private final long rootPath;
    private final LongSupplier clock;
    private final Counts counts;
    private final StampedLock lock = new StampedLock();

    private final PredictionTable table = new PredictionTable(FIRST_TABLE_SLOTS, TABLE_SLOTS);

    // Owners: (worker, dp_rank) -> id via worker -> first id, chained by ownerNext.
    private final LongIntMap ownerByWorker = new LongIntMap();
    private final long[] ownerWorker = new long[MAX_OWNERS];
    private final int[] ownerRank = new int[MAX_OWNERS];
    private final @Nullable String[] ownerNamespace = new String[MAX_OWNERS];
    private final int[] ownerNext = new int[MAX_OWNERS];
    /** 0: this replica's own predictions; else the peer whose sampled predictions the owner holds. */
    private final int[] ownerPeer = new int[MAX_OWNERS];
    /** Live owners holding a peer's predictions: while there are none, a lookup skips the sampled chain. */
    private volatile int peerOwners;
    private final PredictionReader reader;
    private final SampleMemo sampledByWalk = new SampleMemo();
    private final boolean[] ownerLive = new boolean[MAX_OWNERS];
    private final long[] ownerTtl = new long[MAX_OWNERS];
    private final long[] ownerCapacity = new long[MAX_OWNERS];
    private final int[] ownerCount = new int[MAX_OWNERS];
    private final long[] lastStamp = new long[MAX_OWNERS];
    private final long[][] ringPath = new long[MAX_OWNERS][];
    private final long[][] ringStamp = new long[MAX_OWNERS][];
    private final int[] ringHead = new int[MAX_OWNERS];
    private final int[] ringLen = new int[MAX_OWNERS];
    private int ringRecords;
    /** One prediction's path keys (writers only, under the write lock). */
    private final long[] pathScratch = new long[MAX_BLOCKS_PER_PREDICTION];
    private int ownersUsed;
    private int sweepCursor;

    /**
     * @param rootPath the radix index's root key ({@link RadixIndex#rootPath()}), so both key blocks alike
     * @param clock    nanoseconds (injected in tests)
     */
    public PredictedBlocks(long rootPath, LongSupplier clock, Counts counts) {
        this.rootPath = rootPath;
        this.clock = clock;
        this.counts = counts;
        for (int i = 0; i < MAX_OWNERS; i++) {
            ownerNext[i] = -1;
        }
        this.reader = new PredictionReader(rootPath, clock, lock, table,
                new PredictionReader.Owners(ownerWorker, ownerRank, ownerPeer, ownerTtl), () -> peerOwners,
                sampledByWalk);
    }

    /**
     * Raises, in {@code out}, each rank's match depth to its predicted prefix of {@code tokensHashes} when that is
     * deeper: its own predictions' contiguous chain, a peer's deepest sampled position. Lock-free and
     * allocation-free (per-thread scratch); a lookup that keeps racing writers adds nothing.
     */
    public void deepen(long[] tokensHashes, OverlapScores out) {
        if (table.size != 0) {
            reader.deepen(tokensHashes, out);
        }
    }

    /** Predicted (rank, block) entries, live or past their TTL but not yet swept (any thread). */
    public int entries() {
        return table.size;
    }

    /**
     * The samples lookups chained while peers' predictions were held ({@link SampleMemo}): replica sync's sender
     * takes a dispatched prompt's keys from here before it chains the prompt itself.
     */
    public SampleMemo sampledByWalk() {
        return sampledByWalk;
    }

    /** Ring records allocated over all ranks (tests: what repeated predictions cost in memory). */
    int ringRecords() {
        return ringRecords;
    }

    /** Lookups that raced writes and answered without the overlay. */
    public long contendedReads() {
        return reader.contendedReads();
    }

    // ---------------------------------------------------------------- writers

    /**
     * Predicts that (worker, dp_rank) of {@code namespace} holds the prefix {@code tokensHashes} (per-block hashes
     * as a lookup gets them) for {@code ttlNanos}, within {@code capacityBlocks} (0 or less: no card capacity, only
     * the global bounds). Tries the lock briefly; false (counted as dropped) when another writer holds it.
     */
    public boolean predict(String namespace, long workerId, int dpRank, long[] tokensHashes, long ttlNanos,
            long capacityBlocks) {
        if (tokensHashes.length == 0 || ttlNanos <= 0) {
            return true;
        }
        long stamp = 0;
        for (int i = 0; i < TRY_LOCK_SPINS && (stamp = lock.tryWriteLock()) == 0; i++) {
            Thread.onSpinWait();
        }
        if (stamp == 0) {
            counts.count(Outcome.DROPPED, tokensHashes.length);
            return false;
        }
        try {
            int o = owner(namespace, workerId, dpRank, 0);
            if (o < 0) {
                counts.count(Outcome.DROPPED, tokensHashes.length);
                return true;
            }
            long bound = Math.min(MAX_ENTRIES, capacityBlocks > 0 ? capacityBlocks : MAX_ENTRIES);
            int want = (int) Math.min(Math.min(tokensHashes.length, MAX_BLOCKS_PER_PREDICTION), bound);
            long[] paths = pathScratch;
            long path = rootPath;
            for (int i = 0; i < want; i++) {
                path = ChildTable.step(path, tokensHashes[i]);
                paths[i] = path;
            }
            int n = store(o, ttlNanos, bound, want);
            // A prompt longer than the bounds is predicted as far as they go (a prefix is still a correct match).
            counts.count(Outcome.DROPPED, tokensHashes.length - n);
        } finally {
            lock.unlockWrite(stamp);
        }
        return true;
    }

    /**
     * Stores {@code want} keys of {@code pathScratch} for owner o (shallowest first), within {@code bound} entries;
     * the number stored. Under the write lock.
     */
    private int store(int o, long ttlNanos, long bound, int want) {
        long now = clock.getAsLong();
        ownerTtl[o] = ttlNanos;
        ownerCapacity[o] = bound;
        expire(o, now);
        sweepOne(now);
        // Last block first, as an engine touches a served prompt's blocks: each block is then at least as recent
        // as every block after it, so the least recently predicted go tail first and a partly evicted chain
        // keeps a usable prefix (head first, a chain lost its first block and all of it with it).
        // One stamp for the whole prediction, unique per rank: a ring record is its entry's latest when their
        // stamps agree, and the ring's order (tail before head) decides what goes first among equal stamps.
        long stampNow = Math.max(now, lastStamp[o] + 1);
        lastStamp[o] = stampNow;
        int n = 0;
        for (int i = want - 1; i >= 0 && touch(o, pathScratch[i], stampNow); i--) {
            n++;
        }
        counts.count(Outcome.PREDICTED, n);
        return n;
    }

    /**
     * Peer {@code peer} (not 0) predicted that (worker, dp_rank) holds the prefix sampled as {@code wireKeys}
     * ({@link SampledChain}, every {@code stride}-th block, shallowest first): kept in an owner of the peer's own,
     * so {@link #forgetPeer} takes back exactly its part, for {@code ttlNanos} and within {@code capacityBlocks}
     * (each entry standing for {@code stride} blocks) and {@value #MAX_PEER_ENTRIES} entries. The replica-sync
     * thread; waits for the lock.
     */
    public void predictPeer(int peer, String namespace, long workerId, int dpRank, int stride, long[] wireKeys,
            long ttlNanos, long capacityBlocks) {
        if (peer == 0 || wireKeys.length == 0 || ttlNanos <= 0 || !SharedPredictions.validStride(stride)) {
            return;
        }
        long stamp = lock.writeLock();
        try {
            int o = owner(namespace, workerId, dpRank, peer);
            if (o < 0) {
                counts.count(Outcome.DROPPED, wireKeys.length);
                return;
            }
            long bound = Math.min(MAX_PEER_ENTRIES, capacityBlocks > 0 ? Math.max(1, capacityBlocks / stride)
                    : MAX_PEER_ENTRIES);
            int want = (int) Math.min(Math.min(wireKeys.length, SampledChain.MAX_KEYS), bound);
            for (int i = 0; i < want; i++) {
                pathScratch[i] = SampledChain.tableKey(rootPath, wireKeys[i]);
            }
            int n = store(o, ttlNanos, bound, want);
            counts.count(Outcome.DROPPED, wireKeys.length - n);
        } finally {
            lock.unlockWrite(stamp);
        }
    }

    /** Drops every prediction peer {@code peer} made (counted as departed): it left, or restarted. */
    public void forgetPeer(int peer) {
        if (peer == 0 || peerOwners == 0) {
            return;
        }
        long stamp = lock.writeLock();
        try {
            for (int o = 0; o < ownersUsed; o++) {
                if (ownerLive[o] && ownerPeer[o] == peer) {
                    release(o);
                }
            }
        } finally {
            lock.unlockWrite(stamp);
        }
    }

    /** Pops all of o's records, counts them departed and frees o. */
    private void release(int o) {
        int before = ownerCount[o];
        while (ringLen[o] > 0) {
            popHead(o, null);
        }
        counts.count(Outcome.DEPARTED, before);
        freeOwner(o);
    }

    /**
     * kv-events stored {@code count} blocks from {@code from} on (worker, dp_rank) under the block whose path key is
     * {@code parentPath} (the root's for a chain from the root): their predictions leave the overlay, the index holds
     * them now. The kv-events writer's thread; waits for the lock (never a picking thread).
     */
    public void confirm(long workerId, int dpRank, long parentPath, long[] tokensHashes, int from, int count) {
        if (table.size == 0) {
            return;
        }
        long stamp = lock.writeLock();
        try {
            int o = find(workerId, dpRank, 0);
            if (o < 0 || table.keys == null) {
                return;
            }
            long path = parentPath;
            int confirmed = 0;
            for (int i = from; i < from + count; i++) {
                path = ChildTable.step(path, tokensHashes[i]);
                int slot = table.slotOf(path, o);
                if (slot >= 0) {
                    table.delete(slot);
                    ownerCount[o]--;
                    confirmed++;
                }
            }
            counts.count(Outcome.CONFIRMED, confirmed);
        } finally {
            lock.unlockWrite(stamp);
        }
    }

    /** Which ranks stay: a rank of a departed worker (or an undeclared rank) takes its predictions with it. */
    public interface Live {
        boolean live(String namespace, long workerId, long dpRank);
    }

    /** Drops every rank {@code live} no longer admits, with its predictions (counted as departed). */
    public void retain(Live live) {
        long stamp = lock.writeLock();
        try {
            for (int o = 0; o < ownersUsed; o++) {
                String ns = ownerNamespace[o];
                if (ownerLive[o] && ns != null && !live.live(ns, ownerWorker[o], ownerRank[o])) {
                    release(o);
                }
            }
        } finally {
            lock.unlockWrite(stamp);
        }
    }

    /** Inserts or refreshes (path, o); false when the table is full even after evicting o's oldest. */
    private boolean touch(int o, long path, long stamp) {
        table.ensure();
        int slot = table.slotOf(path, o);
        if (slot >= 0) {
            table.restamp(slot, stamp);
            return pushRing(o, path, stamp);
        }
        while (ownerCount[o] >= ownerCapacity[o] && ringLen[o] > 0) {
            popHead(o, Outcome.EVICTED);
        }
        while (table.size >= MAX_ENTRIES && ringLen[o] > 0) {
            popHead(o, Outcome.EVICTED);
        }
        if (table.size >= MAX_ENTRIES) {
            return false;
        }
        table.insert(path, o, stamp);
        ownerCount[o]++;
        return pushRing(o, path, stamp);
    }

    private boolean pushRing(int o, long path, long stamp) {
        long[] rp = ringPath[o];
        if (rp != null && ringLen[o] == rp.length && ownerCount[o] <= ringLen[o] / 2) {
            // At least half the records are refreshed blocks' stale ones: reclaim them rather than grow. A rank
            // predicted the same prefixes over and over (a peer's samples, a conversation's turns) then keeps a
            // ring about twice its live entries, which stays in cache, instead of one grown to twice its capacity.
            compactRing(o);
        }
        if (rp == null || ringLen[o] == rp.length) {
            int cap = rp == null ? 0 : rp.length;
            // Twice the capacity: a refreshed block leaves its older record behind, so the ring holds more records
            // than live entries, and compacting a ring at most half live frees at least half of it.
            int want = (int) Math.min(Math.max(MIN_RING, cap * 2L), Math.max(MIN_RING, 2 * ownerCapacity[o]));
            if (want > cap && ringRecords - cap + want <= RING_BUDGET) {
                growRing(o, want);
            } else if (cap > 0) {
                if (ownerCount[o] < ringLen[o]) {
                    compactRing(o); // drop the records of refreshed blocks before evicting a live one
                }
                if (ringLen[o] == cap) {
                    popHead(o, Outcome.EVICTED); // the least recently predicted record makes room
                }
            } else {
                return false;
            }
        }
        long[] paths = ringPath[o];
        long[] times = ringStamp[o];
        if (paths == null || times == null) {
            return false;
        }
        int at = (ringHead[o] + ringLen[o]) % paths.length;
        paths[at] = path;
        times[at] = stamp;
        ringLen[o]++;
        return true;
    }

    private void growRing(int o, int want) {
        long[] oldPaths = ringPath[o];
        long[] oldTimes = ringStamp[o];
        long[] paths = new long[want];
        long[] times = new long[want];
        int cap = oldPaths == null ? 0 : oldPaths.length;
        if (oldPaths != null && oldTimes != null) {
            for (int i = 0; i < ringLen[o]; i++) {
                paths[i] = oldPaths[(ringHead[o] + i) % cap];
                times[i] = oldTimes[(ringHead[o] + i) % cap];
            }
        }
        ringPath[o] = paths;
        ringStamp[o] = times;
        ringHead[o] = 0;
        ringRecords += want - cap;
    }

    /**
     * Keeps, in order, only o's records that are their entry's latest (stamps are unique per rank, so a live entry has
     * exactly one): the ring then holds one record per live entry. Without it, a rank predicted the same long prefix
     * many times (a conversation's turns, a shared system prompt) fills its ring with the prefix's stale records
     * and evicts live predictions long before the engine would.
     */
    private void compactRing(int o) {
        long[] paths = ringPath[o];
        long[] times = ringStamp[o];
        if (paths == null || times == null) {
            return;
        }
        int cap = paths.length;
        int kept = 0;
        for (int i = 0; i < ringLen[o]; i++) {
            int at = (ringHead[o] + i) % cap;
            int slot = table.slotOf(paths[at], o);
            if (slot >= 0 && table.stampAt(slot) == times[at]) {
                int to = (ringHead[o] + kept) % cap; // never ahead of at: kept <= i
                paths[to] = paths[at];
                times[to] = times[at];
                kept++;
            }
        }
        ringLen[o] = kept;
    }

    /** Pops o's oldest record; deletes its entry when no later prediction refreshed it ({@code why} counted). */
    private void popHead(int o, @Nullable Outcome why) {
        long[] paths = ringPath[o];
        long[] times = ringStamp[o];
        if (paths == null || times == null || ringLen[o] == 0) {
            return;
        }
        int h = ringHead[o];
        long path = paths[h];
        long time = times[h];
        ringHead[o] = (h + 1) % paths.length;
        ringLen[o]--;
        int slot = table.slotOf(path, o);
        if (slot >= 0 && table.stampAt(slot) == time) {
            table.delete(slot);
            ownerCount[o]--;
            if (why != null) {
                counts.count(why, 1);
            }
        }
    }

    /** Pops o's records older than its TTL. */
    private void expire(int o, long now) {
        long[] times = ringStamp[o];
        while (times != null && ringLen[o] > 0 && now - times[ringHead[o]] > ownerTtl[o]) {
            popHead(o, Outcome.EXPIRED);
        }
    }

    /** Expires a few other ranks per prediction, so a rank that is no longer picked still lets go. */
    private void sweepOne(long now) {
        for (int i = 0; i < SWEEP_PER_PREDICTION && ownersUsed > 0; i++) {
            int o = sweepCursor++ % ownersUsed;
            if (ownerLive[o]) {
                expire(o, now);
            }
        }
    }

    /** The owner id of (worker, dp_rank) for {@code peer} (0: own), made when new; -1 when every id is taken. */
    private int owner(String namespace, long workerId, int dpRank, int peer) {
        int o = find(workerId, dpRank, peer);
        if (o >= 0) {
            ownerNamespace[o] = namespace;
            return o;
        }
        for (o = 0; o < MAX_OWNERS && ownerLive[o]; o++) {
            // first free id
        }
        if (o == MAX_OWNERS) {
            return -1;
        }
        ownerLive[o] = true;
        ownerWorker[o] = workerId;
        ownerRank[o] = dpRank;
        ownerPeer[o] = peer;
        if (peer != 0) {
            peerOwners = peerOwners + 1;
        }
        ownerNamespace[o] = namespace;
        ownerCount[o] = 0;
        lastStamp[o] = Long.MIN_VALUE / 2;
        int first = ownerByWorker.get(workerId);
        ownerNext[o] = first;
        ownerByWorker.put(workerId, o);
        ownersUsed = Math.max(ownersUsed, o + 1);
        return o;
    }

    private int find(long workerId, int dpRank, int peer) {
        for (int o = ownerByWorker.get(workerId); o >= 0; o = ownerNext[o]) {
            if (ownerRank[o] == dpRank && ownerPeer[o] == peer) {
                return o;
            }
        }
        return -1;
    }

    private void freeOwner(int o) {
        long worker = ownerWorker[o];
        int first = ownerByWorker.get(worker);
        if (first == o) {
            if (ownerNext[o] >= 0) {
                ownerByWorker.put(worker, ownerNext[o]);
            } else {
                ownerByWorker.remove(worker);
            }
        } else {
            for (int p = first; p >= 0; p = ownerNext[p]) {
                if (ownerNext[p] == o) {
                    ownerNext[p] = ownerNext[o];
                    break;
                }
            }
        }
        ownerNext[o] = -1;
        ownerLive[o] = false;
        if (ownerPeer[o] != 0) {
            peerOwners = peerOwners - 1;
            ownerPeer[o] = 0;
        }
        ownerNamespace[o] = null;
        long[] paths = ringPath[o];
        ringRecords -= paths == null ? 0 : paths.length;
        ringPath[o] = null;
        ringStamp[o] = null;
        ringHead[o] = 0;
        ringLen[o] = 0;
        ownerCount[o] = 0;
    }
}
