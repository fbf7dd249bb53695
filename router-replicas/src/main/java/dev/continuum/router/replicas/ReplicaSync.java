package dev.continuum.router.replicas;

import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.eventplane.nats.NatsConnection;
import dev.continuum.router.eventplane.nats.NatsTap;
import dev.continuum.router.shim.ActiveSequences;
import dev.continuum.router.shim.SharedPredictions;
import dev.continuum.router.shim.SessionAffinity;
import io.micrometer.core.instrument.MeterRegistry;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import io.nats.client.Subscription;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replica sync (docs/replicas.md) over the process's shared NATS connection: publishes this replica's accounting
 * on {@code continuum.replicas.{group}.{replica}} in numbered batches with a heartbeat, serves snapshots on
 * {@code continuum.replicas.{group}.{replica}.snapshot}, and folds every peer's stream into the picker's view as
 * a separate {@link PeerPartition}.
 *
 * <p>Threads: NATS callbacks only check a message's size and queue it (bounded); the sequence drainer only queues
 * its events ({@link OwnStream}); one sync thread does everything else every {@code batch_interval}, so no state
 * here is shared and nothing on the request path waits for NATS. The sync thread runs only while
 * {@code dynamo.replicas.enabled}: a reload that turns sync on starts it, one that turns it off leaves the group
 * and stops it (session bindings without sync need no thread: see {@link SessionBindings}). With NATS away, the picker keeps its own view
 * (peers time out within {@code peer_timeout}); when NATS returns, every peer is asked for a fresh snapshot.
 */
public final class ReplicaSync extends StartStopSupport implements NatsTap {
    static final String PREFIX = "continuum.replicas.";
    /** Inbound messages waiting for the sync thread at most. */
    static final int MAX_INBOUND = 4096;
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaSync.class);

    private record Inbound(String subject, @Nullable String replyTo, byte[] data) {
    }

    private final ActiveSequences view;
    private final NatsConnection nats;
    private final LongSupplier ticker;
    private final ReplicaMetrics metrics;
    private final OwnStream own = new OwnStream();
    private final PeerSet peers;
    private final SessionBindings sessions;
    /** Whether this replica is in its group (own bind events are queued only then). */
    private volatile boolean sharing;
    private final String generatedId;
    private final ConcurrentLinkedQueue<Inbound> inbound = new ConcurrentLinkedQueue<>();
    private final AtomicInteger inboundCount = new AtomicInteger();
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private volatile ReplicasConfig config = ReplicasConfig.DEFAULTS;
    private volatile List<PeerView> peerViews = List.of();
    private volatile long lagNanos;
    private volatile int syncedPeers;
    private volatile int resyncingPeers;

    /** Guards starting and stopping the sync thread ({@link #executor}) and {@link #running}. */
    private final Object threadLock = new Object();
    /** Between start and stop: whether an enabled config may have a sync thread. */
    private boolean running;
    private volatile @Nullable ScheduledExecutorService executor;
    // The connection as NATS last reported it (callbacks write, the sync thread reads).
    private volatile @Nullable Connection connection;
    private volatile @Nullable Dispatcher dispatcher;
    private volatile boolean connected;

    // Sync-thread owned.
    private @Nullable ScheduledFuture<?> ticking;
    private @Nullable ReplicasConfig active;
    private @Nullable AutoCloseable listening;
    private final List<Subscription> subscriptions = new ArrayList<>();
    private @Nullable String inbox;
    private boolean lossLogged;
    private long lastHeartbeat;

    public ReplicaSync(ActiveSequences view, NatsConnection nats, MeterRegistry registry, LongSupplier ticker) {
        this.view = Objects.requireNonNull(view, "view");
        this.nats = Objects.requireNonNull(nats, "nats");
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        this.metrics = new ReplicaMetrics(registry, this);
        this.sessions = new SessionBindings(ticker, b -> {
            if (sharing) {
                own.bind(b);
            }
        });
        this.peers = new PeerSet(view, metrics, this::askSnapshot, sessions::peerBound);
        metrics.sessions(registry, sessions);
        byte[] random = new byte[4];
        new SecureRandom().nextBytes(random);
        this.generatedId = "r" + HexFormat.of().formatHex(random);
    }

    /**
     * Applies {@code next} from the next tick on (hot reload); any thread. Turning sync on starts the sync thread
     * (joined before this returns), turning it off leaves the group and stops the thread.
     */
    public void apply(ReplicasConfig next) {
        config = Objects.requireNonNull(next, "next");
        sessions.ttl(next.sessionTtl());
        synchronized (threadLock) {
            if (!running) {
                return; // start applies it
            }
            if (!next.enabled()) {
                stopThread();
            } else if (executor == null) {
                startThread(next);
            } else {
                tasks.add(() -> reschedule(next));
            }
        }
    }

    /**
     * Approximate mode's predictions, shared with peers (router-kv's predicted cache, docs/replicas.md "Approximate
     * mode"): this replica's dispatches are sampled through it, peers' samples handed to it. Set once at start.
     */
    public void sharePredictions(SharedPredictions predictions) {
        own.predictions(predictions);
        peers.predictions(predictions);
    }

    /**
     * Session affinity for the dispatcher ({@code x-dynamo-session-id}): the bindings, shared with the group's
     * peers while sync is on, and this replica's own otherwise.
     */
    public SessionAffinity sessions() {
        return sessions;
    }

    /** This replica's ID in its group: {@code replica_id}, or the one generated for this process. */
    public String replicaId() {
        String id = config.replicaId();
        return id != null ? id : generatedId;
    }

    /** The followed peers with their last applied batch (the admin view); any thread. */
    public List<PeerView> peers() {
        return peerViews;
    }

    /** This replica's last batch number and epoch, and its live sequences as peers see them. */
    public OwnView own() {
        return new OwnView(replicaId(), ownEpoch, ownSeq, ownLive);
    }

    /** This replica as the admin view shows it. */
    public record OwnView(String replica, long epoch, long lastSeq, int sequences) {
    }

    private volatile long ownEpoch;
    private volatile long ownSeq;
    private volatile int ownLive;

    int peerCount(boolean synced) {
        return synced ? syncedPeers : resyncingPeers;
    }

    double syncLagSeconds() {
        return lagNanos / 1e9;
    }

    ReplicaMetrics metrics() {
        return metrics;
    }

    @Override
    protected String lifecycleName() {
        return "replica sync";
    }

    @Override
    protected CompletableFuture<Void> doStart() throws Exception {
        synchronized (threadLock) {
            running = true;
            ReplicasConfig c = config;
            if (c.enabled()) {
                startThread(c);
            }
        }
        nats.register(this);
        return CompletableFuture.completedFuture(null);
    }

    @Override
    protected CompletableFuture<Void> doStop() throws Exception {
        nats.unregister(this);
        synchronized (threadLock) {
            running = false;
            stopThread();
        }
        return CompletableFuture.completedFuture(null);
    }

    /** Starts the sync thread and joins the group under {@code c}; joined before it returns. Under the lock. */
    private void startThread(ReplicasConfig c) {
        ScheduledExecutorService e = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "continuum-replica-sync");
            t.setDaemon(true);
            return t;
        });
        executor = e;
        tasks.clear(); // the state they would set is read from the fields at join
        try {
            // The listener sees every dispatch from the first request after this on.
            e.submit(() -> reschedule(c)).get(5, TimeUnit.SECONDS);
        } catch (Exception ex) {
            LOG.warn("replica sync: joining the group failed; retried at the next tick: {}", LogSafe.escape(ex));
            tasks.add(() -> reschedule(c));
        }
    }

    /** Leaves the group and stops the sync thread, if it runs. Under the lock. */
    private void stopThread() {
        ScheduledExecutorService e = executor;
        if (e == null) {
            return;
        }
        try {
            e.submit(() -> {
                leave();
                ticking = null;
                active = null;
            }).get(5, TimeUnit.SECONDS);
        } catch (Exception ex) {
            LOG.warn("replica sync: leaving the group failed: {}", LogSafe.escape(ex));
        }
        executor = null;
        e.shutdownNow();
        tasks.clear();
        inbound.clear();
        inboundCount.set(0);
    }

    // ------------------------------------------------------------------ NATS callbacks (never block)

    @Override
    public void attach(Connection c, Dispatcher d) {
        connection = c;
        dispatcher = d;
        connected = true;
        whileSyncing(() -> {
            subscribe();
            peers.resyncAll(ticker.getAsLong());
        });
    }

    /** Queues {@code task} for the sync thread while it runs; without it, the state is read at the next join. */
    private void whileSyncing(Runnable task) {
        if (executor != null) {
            tasks.add(task);
        }
    }

    @Override
    public void lost() {
        connected = false;
        whileSyncing(() -> {
            if (!lossLogged) {
                lossLogged = true;
                LOG.warn("replica sync: NATS unreachable; routing on this replica's own view, peers are dropped "
                        + "after peer_timeout and resynchronised when NATS returns (logged once)");
            }
        });
    }

    @Override
    public void resumed() {
        connected = true;
        whileSyncing(() -> {
            LOG.info("replica sync: NATS is back; asking every peer for a snapshot");
            peers.resyncAll(ticker.getAsLong());
        });
    }

    @Override
    public void detached() {
        connected = false;
        connection = null;
        dispatcher = null;
        whileSyncing(this::unsubscribe); // the connection closes with its subscriptions
    }

    private void receive(Message m) {
        byte[] data = m.getData();
        int max = config.maxMessageBytes();
        if (data == null || data.length > max) {
            metrics.dropped(data == null ? SyncDrop.MALFORMED : SyncDrop.OVERSIZED);
            return;
        }
        if (inboundCount.incrementAndGet() > MAX_INBOUND) {
            inboundCount.decrementAndGet();
            metrics.dropped(SyncDrop.BACKLOG);
            return;
        }
        inbound.add(new Inbound(m.getSubject(), m.getReplyTo(), data));
    }

    // ------------------------------------------------------------------ sync thread

    private void reschedule(ReplicasConfig next) {
        ScheduledExecutorService e = executor;
        ReplicasConfig before = active;
        if (e == null || e.isShutdown()) {
            return;
        }
        boolean identity = before == null || before.enabled() != next.enabled() || !before.group().equals(next.group())
                || !Objects.equals(before.replicaId(), next.replicaId());
        if (identity) {
            leave();
            active = next;
            if (next.enabled()) {
                join();
            }
        }
        active = next;
        if (ticking == null || before == null || !before.batchInterval().equals(next.batchInterval())) {
            if (ticking != null) {
                ticking.cancel(false);
            }
            long period = next.batchInterval().toNanos();
            ticking = e.scheduleWithFixedDelay(this::tickGuarded, period, period, TimeUnit.NANOSECONDS);
        }
    }

    private void join() {
        long epoch = (System.currentTimeMillis() << 12) | new SecureRandom().nextInt(1 << 12);
        own.identity(replicaId(), epoch);
        ownEpoch = epoch;
        listening = view.listen(own);
        sharing = true;
        subscribe();
        LOG.info("replica sync: replica {} joined group {}", LogSafe.escape(replicaId()),
                LogSafe.escape(config.group()));
    }

    private void leave() {
        sharing = false;
        AutoCloseable l = listening;
        listening = null;
        if (l != null) {
            try {
                l.close();
            } catch (Exception ex) {
                LOG.warn("replica sync: listener not removed: {}", LogSafe.escape(ex));
            }
        }
        unsubscribe();
        peers.clear();
        publishViews(ticker.getAsLong());
    }

    private void subscribe() {
        unsubscribe();
        ReplicasConfig c = active;
        Dispatcher d = dispatcher;
        Connection conn = connection;
        if (c == null || !c.enabled() || d == null || conn == null || listening == null) {
            return;
        }
        String self = streamSubject(c.group(), own.replicaId());
        subscriptions.add(d.subscribe(PREFIX + c.group() + ".*", this::receive));
        subscriptions.add(d.subscribe(self + ".snapshot", this::receive));
        String box = conn.createInbox();
        inbox = box;
        subscriptions.add(d.subscribe(box, this::receive));
    }

    private void unsubscribe() {
        Dispatcher d = dispatcher;
        for (Subscription s : subscriptions) {
            try {
                if (d != null) {
                    d.unsubscribe(s);
                }
            } catch (RuntimeException ex) {
                // The connection is closing: its subscriptions go with it.
            }
        }
        subscriptions.clear();
        inbox = null;
    }

    static String streamSubject(String group, String replica) {
        return PREFIX + group + "." + replica;
    }

    private void tickGuarded() {
        try {
            tick();
        } catch (RuntimeException ex) {
            LOG.warn("replica sync tick failed; retrying", ex);
        }
    }

    private void tick() {
        for (Runnable t = tasks.poll(); t != null; t = tasks.poll()) {
            t.run();
        }
        ReplicasConfig c = active;
        long now = ticker.getAsLong();
        if (c == null || !c.enabled() || listening == null) {
            return; // the thread is being stopped
        }
        for (Inbound in = inbound.poll(); in != null; in = inbound.poll()) {
            inboundCount.decrementAndGet();
            handle(c, in, now);
        }
        own.drain(c.maxBatchEvents(), c.maxMessageBytes(), (seq, bytes) -> publish(c, SyncMessage.Kind.BATCH, bytes));
        boolean beat = now - lastHeartbeat >= c.heartbeatInterval().toNanos();
        if (beat) {
            lastHeartbeat = now;
            publish(c, SyncMessage.Kind.HEARTBEAT, own.heartbeat());
        }
        long timeout = c.peerTimeout().toNanos();
        peers.tick(now, timeout, timeout, beat);
        ownSeq = own.seq();
        ownLive = own.live();
        if (beat) {
            sessions.sweep();
            publishViews(now);
        }
    }

    private void handle(ReplicasConfig c, Inbound in, long now) {
        String self = streamSubject(c.group(), own.replicaId());
        SyncMessage m;
        try {
            m = SyncCodec.decode(in.data());
        } catch (SyncCodec.Malformed | IllegalArgumentException ex) {
            metrics.dropped(SyncDrop.MALFORMED);
            return;
        }
        if (in.subject().equals(self + ".snapshot")) {
            if (m.kind() != SyncMessage.Kind.SNAPSHOT_REQUEST || in.replyTo() == null) {
                metrics.dropped(SyncDrop.MALFORMED);
                return;
            }
            serveSnapshot(c, Objects.requireNonNull(in.replyTo()));
            return;
        }
        if (in.subject().equals(inbox)) {
            if (m.kind() != SyncMessage.Kind.SNAPSHOT) {
                metrics.dropped(SyncDrop.MALFORMED);
                return;
            }
            peers.onSnapshot(m, now);
            return;
        }
        String token = in.subject().substring(Math.min(in.subject().length(), PREFIX.length() + c.group().length() + 1));
        if (token.equals(own.replicaId())) {
            if (m.epoch() != own.epoch()) {
                metrics.dropped(SyncDrop.FORGED); // another process under this replica's ID
            }
            return; // our own message, echoed
        }
        if (!token.equals(m.replica())
                || (m.kind() != SyncMessage.Kind.BATCH && m.kind() != SyncMessage.Kind.HEARTBEAT)) {
            metrics.dropped(SyncDrop.FORGED);
            return;
        }
        peers.onStream(m, now, c.maxPeers());
    }

    private void serveSnapshot(ReplicasConfig c, String replyTo) {
        // Everything queued goes out first, so the snapshot's batch number covers it.
        own.drain(c.maxBatchEvents(), c.maxMessageBytes(), (seq, bytes) -> publish(c, SyncMessage.Kind.BATCH, bytes));
        for (byte[] chunk : own.snapshot(c.maxMessageBytes(), sessions.own())) {
            publishTo(replyTo, SyncMessage.Kind.SNAPSHOT, chunk);
        }
    }

    private void askSnapshot(String peer) {
        ReplicasConfig c = active;
        String box = inbox;
        Connection conn = connection;
        if (c == null || box == null || conn == null || !connected) {
            return; // asked again after peer_timeout (the pending snapshot's retry) or when NATS returns
        }
        byte[] data = own.snapshotRequest();
        try {
            conn.publish(streamSubject(c.group(), peer) + ".snapshot", box, data);
            metrics.published(SyncMessage.Kind.SNAPSHOT_REQUEST, data.length);
        } catch (RuntimeException ex) {
            metrics.unpublished();
        }
    }

    private void publish(ReplicasConfig c, SyncMessage.Kind kind, byte[] data) {
        publishTo(streamSubject(c.group(), own.replicaId()), kind, data);
    }

    private void publishTo(String subject, SyncMessage.Kind kind, byte[] data) {
        Connection conn = connection;
        if (conn == null || !connected || conn.getStatus() != Connection.Status.CONNECTED) {
            // Not buffered in the client: the batch number still moves, so peers see the gap and resynchronise.
            if (kind == SyncMessage.Kind.BATCH) {
                metrics.unpublished();
            }
            return;
        }
        try {
            conn.publish(subject, data);
            metrics.published(kind, data.length);
            lossLogged = false;
        } catch (RuntimeException ex) {
            metrics.unpublished();
        }
    }

    private void publishViews(long now) {
        List<PeerView> v = peers.views(now);
        peerViews = v;
        long lag = 0;
        int synced = 0;
        for (PeerView p : v) {
            lag = Math.max(lag, p.heardMillis() * 1_000_000);
            synced += p.synced() ? 1 : 0;
        }
        lagNanos = lag;
        syncedPeers = synced;
        resyncingPeers = v.size() - synced;
    }
}
