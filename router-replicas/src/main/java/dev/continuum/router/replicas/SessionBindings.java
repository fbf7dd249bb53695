package dev.continuum.router.replicas;

import dev.continuum.router.load.SampleKey;
import dev.continuum.router.shim.SessionAffinity;
import dev.continuum.router.shim.WorkerPin;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Session affinity (docs/replicas.md): which decode rank each session is bound to, for {@code session_ttl} after its
 * last turn, shared with the group's peers. The dispatcher reads and writes it on the picking thread without a
 * lock (one concurrent-map read per turn; a write only when a session is new, moves, or its binding is older than
 * a quarter of the TTL, which is also when a bind event is sent to peers). Peers' bind events land in the same
 * table, so every replica sends a session's turns to the same rank; the last bind wins. A rank that left or
 * stalled is not taken by the picker: the turn is picked as usual and the session rebinds there.
 *
 * <p>Expired bindings are never used; they are forgotten by the sync thread's sweep every heartbeat while sync
 * runs, and otherwise (no sync thread) when the table is full and a new session comes, at most once per
 * {@link #FULL_SWEEP_INTERVAL_NANOS}, so the table never needs a thread of its own.
 */
final class SessionBindings implements SessionAffinity {
    /** Sessions bound at once (own and peers'); past it a new session is not bound, counted. */
    static final int MAX_SESSIONS = 65_536;
    /** A full table is swept for expired bindings at most this often from the picking thread. */
    static final long FULL_SWEEP_INTERVAL_NANOS = 1_000_000_000L;

    private record Binding(SampleKey rank, long boundAt, long expiresAt, boolean own) {
    }

    private final ConcurrentHashMap<String, Binding> table = new ConcurrentHashMap<>();
    private final LongSupplier ticker;
    private final Consumer<SyncEvent.Bind> publish;
    private final AtomicLong unbound = new AtomicLong();
    private final AtomicLong lastFullSweep;
    private volatile long ttlNanos;

    SessionBindings(LongSupplier ticker, Consumer<SyncEvent.Bind> publish) {
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        this.publish = Objects.requireNonNull(publish, "publish");
        this.lastFullSweep = new AtomicLong(ticker.getAsLong() - FULL_SWEEP_INTERVAL_NANOS);
    }

    /** {@code session_ttl}; zero turns affinity off (and forgets every binding at the next sweep). */
    void ttl(java.time.Duration ttl) {
        ttlNanos = ttl.toNanos();
        if (ttlNanos <= 0) {
            table.clear();
        }
    }

    @Override
    public @Nullable SampleKey bound(String session) {
        if (ttlNanos <= 0) {
            return null;
        }
        Binding b = table.get(session);
        return b == null || ticker.getAsLong() - b.expiresAt > 0 ? null : b.rank();
    }

    @Override
    public void bind(String session, WorkerPin decode) {
        long ttl = ttlNanos;
        if (ttl <= 0) {
            return;
        }
        long now = ticker.getAsLong();
        Binding b = table.get(session);
        if (b != null && b.own() && now - b.boundAt < ttl / 4 && b.rank().dpRank() == decode.dpRank()
                && b.rank().worker().equals(decode.worker())) {
            return; // fresh enough: no write, no event
        }
        if (b == null && table.size() >= MAX_SESSIONS && !sweptRoom(now)) {
            unbound.incrementAndGet();
            return;
        }
        SampleKey rank = new SampleKey(decode.worker(), decode.dpRank());
        table.put(session, new Binding(rank, now, now + ttl, true));
        publish.accept(new SyncEvent.Bind(session, rank, ttl / 1_000_000));
    }

    /**
     * A full table: forgets its expired bindings, one caller at most every {@link #FULL_SWEEP_INTERVAL_NANOS}
     * (the others find it full), and answers whether there is room now.
     */
    private boolean sweptRoom(long now) {
        long last = lastFullSweep.get();
        if (now - last >= FULL_SWEEP_INTERVAL_NANOS && lastFullSweep.compareAndSet(last, now)) {
            sweep();
        }
        return table.size() < MAX_SESSIONS;
    }

    /** A peer's bind event (sync thread). */
    void peerBound(SyncEvent.Bind b) {
        if (ttlNanos <= 0 || (!table.containsKey(b.session()) && table.size() >= MAX_SESSIONS)) {
            unbound.incrementAndGet();
            return;
        }
        long now = ticker.getAsLong();
        table.put(b.session(), new Binding(b.rank(), now, now + b.ttlMillis() * 1_000_000, false));
    }

    /** Forgets expired bindings (sync thread, every heartbeat). */
    void sweep() {
        long now = ticker.getAsLong();
        boolean off = ttlNanos <= 0;
        table.values().removeIf(b -> off || now - b.expiresAt > 0);
    }

    /** The live bindings this replica made, with their remaining TTL: what its snapshot carries. */
    List<SyncEvent.Bind> own() {
        long now = ticker.getAsLong();
        List<SyncEvent.Bind> out = new ArrayList<>();
        for (Map.Entry<String, Binding> e : table.entrySet()) {
            Binding b = e.getValue();
            long left = b.expiresAt - now;
            if (b.own() && left > 0) {
                out.add(new SyncEvent.Bind(e.getKey(), b.rank(), left / 1_000_000));
            }
        }
        return out;
    }

    int size() {
        return table.size();
    }

    long unbound() {
        return unbound.get();
    }
}
