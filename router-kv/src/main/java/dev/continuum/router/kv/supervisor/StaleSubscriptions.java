package dev.continuum.router.kv.supervisor;

import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.kv.events.KvEventIngest;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kv-events cut-off: a publisher whose subscription has been out of session for {@link #STALE_AFTER}
 * (disconnected, in backoff, or pending while no broker covers it) has its ranks cleared from the KV index
 * once, with a warning, so blocks the worker may have evicted meanwhile stop earning overlap credit. Shorter
 * outages keep ranks and cursors: the first event after the reconnect shows what was missed as a gap.
 *
 * <p>Tracked per publisher, not per subscription object, because a transport switch or a changed record
 * replaces the subscription while the ranks it fed stay in the index. A publisher enters the tracking only
 * once a session of it was connected (before that it fed nothing) and leaves it when it reconnects, when its
 * ranks are cleared, or when it departs. Callers are the subscriptions' event loops and one sweeper; every
 * update is one atomic map operation.
 */
final class StaleSubscriptions {
    /** How long a kv-events subscription may be out of session before its ranks leave the index. */
    static final Duration STALE_AFTER = Duration.ofSeconds(60);
    /** How often {@link #sweep} runs: the cut-off fires between 60 and 61 s. */
    static final Duration SWEEP_EVERY = Duration.ofSeconds(1);

    private static final Logger LOG = LoggerFactory.getLogger(StaleSubscriptions.class);

    /** Connected sessions of a publisher, and since when (ticker) it has had none. */
    private record Sessions(int connected, long idleSince) {
    }

    private final KvEventIngest ingest;
    private final LongSupplier ticker;
    private final ConcurrentHashMap<PublisherId, Sessions> tracked = new ConcurrentHashMap<>();

    StaleSubscriptions(KvEventIngest ingest, LongSupplier ticker) {
        this.ingest = ingest;
        this.ticker = ticker;
    }

    /** A session of {@code publisher} completed its handshake. */
    void connected(PublisherId publisher) {
        tracked.compute(publisher, (k, s) -> new Sessions(s == null ? 1 : s.connected() + 1, 0));
    }

    /**
     * A connected session of {@code publisher} ended (the subscription reconnects, or is being replaced). When
     * it was the last one, the publisher's out-of-session time starts now.
     */
    void released(PublisherId publisher) {
        long now = ticker.getAsLong();
        tracked.compute(publisher, (k, s) -> {
            int left = s == null ? 0 : Math.max(0, s.connected() - 1);
            return left > 0 ? new Sessions(left, 0) : new Sessions(0, s != null && s.connected() == 0
                    ? s.idleSince() : now);
        });
    }

    /** {@code publisher} departed: its ranks left the index with its subscription. */
    void forget(PublisherId publisher) {
        tracked.remove(publisher);
    }

    /**
     * Clears the ranks of every publisher out of session for at least {@link #STALE_AFTER}; returns how many.
     * A publisher that reconnects while this runs keeps its new session's tracking, since only the exact state
     * that was found stale is removed.
     */
    int sweep() {
        long now = ticker.getAsLong();
        long staleAfter = STALE_AFTER.toNanos();
        int cleared = 0;
        for (Map.Entry<PublisherId, Sessions> e : tracked.entrySet()) {
            Sessions s = e.getValue();
            if (s.connected() == 0 && now - s.idleSince() >= staleAfter && tracked.remove(e.getKey(), s)) {
                PublisherId p = e.getKey();
                LOG.warn("kv-events publisher {} in namespace {} has had no connected subscription for {} s: its "
                        + "ranks leave the KV index until it reconnects", Long.toUnsignedString(p.publisherId()),
                        LogSafe.escape(p.namespace()), STALE_AFTER.toSeconds());
                ingest.onSubscriptionClosed(p);
                cleared++;
            }
        }
        return cleared;
    }
}
