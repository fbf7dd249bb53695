package dev.continuum.router.replicas;

import dev.continuum.router.load.SampleKey;
import dev.continuum.router.shim.ActiveSequences;
import dev.continuum.router.shim.PeerCounters;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One peer replica's part of this router's view: its live sequences and what they add to each rank, kept apart
 * so that the peer's departure or restart takes back exactly what it added. Owned by the sync thread alone.
 *
 * <p>The counters a pick reads ({@link PeerCounters}, the rank's own) are written only by {@link #reconcile}: it
 * moves each touched rank's charge to the desired totals, onto the rank's current counters object (a rank that is
 * in no candidate index yet is charged later, a replaced one is moved), so a pick never sees a lock or a lookup.
 */
final class PeerPartition {
    /** Live sequences of one peer at most (the sender's own bound). */
    static final int MAX_SEQUENCES = 65_536;

    private record Live(SampleKey decode, @Nullable SampleKey prefill, long tokens, long blocks, boolean[] first) {
    }

    /** What the peer's live sequences add to one rank, and what was added to which counters object. */
    private static final class Share {
        final SampleKey key;
        long tokens;
        long blocks;
        int open;
        @Nullable PeerCounters charged;
        long chargedTokens;
        long chargedBlocks;
        int chargedOpen;

        Share(SampleKey key) {
            this.key = key;
        }

        boolean empty() {
            return tokens == 0 && blocks == 0 && open == 0 && chargedTokens == 0 && chargedBlocks == 0
                    && chargedOpen == 0;
        }
    }

    final String replica;
    final long epoch;
    /** This partition's number in the predicted cache (unique per process, never 0). */
    final int number;
    private final Map<Long, Live> live = new HashMap<>();
    private final Map<SampleKey, Share> shares = new HashMap<>();
    private final List<Share> dirty = new ArrayList<>();
    /** The last batch applied; -1 before the first snapshot. */
    long seq = -1;
    /** When the peer was last heard from (sync-thread ticker). */
    long heardAt;

    PeerPartition(String replica, long epoch, long now, int number) {
        this.replica = Objects.requireNonNull(replica, "replica");
        this.number = number;
        this.epoch = epoch;
        this.heardAt = now;
    }

    boolean synced() {
        return seq >= 0;
    }

    int sequences() {
        return live.size();
    }

    /** Applies one event; false when the partition is at its bound (the add is dropped). */
    boolean apply(SyncEvent event) {
        if (event instanceof SyncEvent.Bind || event instanceof SyncEvent.Predict) {
            return true; // neither is a partition's: the session table and the predicted cache keep them
        }
        if (event instanceof SyncEvent.Add a) {
            if (live.size() >= MAX_SEQUENCES || live.containsKey(a.id())) {
                return false;
            }
            live.put(a.id(), new Live(a.decode(), a.prefill(), a.prefillTokens(), a.blocks(), new boolean[1]));
            share(a.prefill() != null ? a.prefill() : a.decode(), a.prefillTokens(), 0, 0);
            share(a.decode(), 0, a.blocks(), 1);
            if (a.prefill() != null) {
                share(a.prefill(), 0, a.blocks(), 1);
            }
        } else if (event instanceof SyncEvent.First) {
            Live l = live.get(event.id());
            if (l != null && !l.first()[0]) {
                l.first()[0] = true;
                prefillOver(l);
            }
        } else {
            Live l = live.remove(event.id());
            if (l != null) {
                if (!l.first()[0]) {
                    prefillOver(l);
                }
                share(l.decode(), 0, -l.blocks(), -1);
            }
        }
        return true;
    }

    /** The rank that prefills live sequence {@code id} (its pair's prefill rank, else its decode rank), or null. */
    @Nullable SampleKey prefilling(long id) {
        Live l = live.get(id);
        return l == null ? null : l.prefill() != null ? l.prefill() : l.decode();
    }

    private void prefillOver(Live l) {
        SampleKey prefill = l.prefill();
        share(prefill != null ? prefill : l.decode(), -l.tokens(), 0, 0);
        if (prefill != null) {
            share(prefill, 0, -l.blocks(), -1);
        }
    }

    private void share(SampleKey rank, long tokens, long blocks, int open) {
        Share s = shares.computeIfAbsent(rank, Share::new);
        s.tokens += tokens;
        s.blocks += blocks;
        s.open += open;
        dirty.add(s);
    }

    /** Forgets every live sequence (a gap or a restart): the next reconcile takes their charges back. */
    void clear() {
        live.clear();
        for (Share s : shares.values()) {
            s.tokens = 0;
            s.blocks = 0;
            s.open = 0;
            dirty.add(s);
        }
    }

    /**
     * Brings the counters the picker reads to this partition's totals: the touched ranks, or every rank when
     * {@code all} (ranks that entered or were replaced in the candidate index since).
     */
    void reconcile(ActiveSequences view, boolean all) {
        if (all) {
            dirty.clear();
            dirty.addAll(shares.values());
        }
        for (Share s : dirty) {
            // A Share may be listed several times: the second pass finds nothing to move.
            move(view, s);
        }
        dirty.clear();
        if (all) {
            shares.values().removeIf(Share::empty);
        }
    }

    private void move(ActiveSequences view, Share s) {
        PeerCounters now = view.peerCounters(s.key);
        if (now != s.charged) {
            if (s.charged != null) {
                s.charged.add(-s.chargedTokens, -s.chargedBlocks, -s.chargedOpen);
            }
            s.charged = now;
            s.chargedTokens = 0;
            s.chargedBlocks = 0;
            s.chargedOpen = 0;
        }
        if (now != null) {
            now.add(s.tokens - s.chargedTokens, s.blocks - s.chargedBlocks, s.open - s.chargedOpen);
            s.chargedTokens = s.tokens;
            s.chargedBlocks = s.blocks;
            s.chargedOpen = s.open;
        }
    }

    /** Takes back everything this partition added (the peer left): nothing of it counts afterwards. */
    void release(ActiveSequences view) {
        clear();
        reconcile(view, true);
    }

    /** What this partition adds, summed over ranks (the admin view, tests). */
    Totals totals() {
        long tokens = 0;
        long blocks = 0;
        int open = 0;
        for (Share s : shares.values()) {
            tokens += s.tokens;
            blocks += s.blocks;
            open += s.open;
        }
        return new Totals(live.size(), tokens, blocks, open);
    }

    record Totals(int sequences, long prefillTokens, long blocks, int rankSequences) {
    }
}
