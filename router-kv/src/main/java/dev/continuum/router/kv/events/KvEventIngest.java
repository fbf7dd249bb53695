package dev.continuum.router.kv.events;

import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.load.DpRanks;
import dev.continuum.router.eventplane.zmtp.ZmtpMessage;
import java.util.Map;

/**
 * Where the KV supervisor's kv-events subscriptions deliver: the index's write side. Every method returns at
 * once and never blocks: messages are checked and copied into the index writer's bounded queue (a full queue
 * drops the message, counted, and the rank's next event then shows a gap), and the writer thread applies them
 * in order. Safe to call from any thread, typically a subscription's event loop.
 *
 * <p>A message's events are admitted only for a worker that is live in the latest {@link #onFleet} view, in
 * that view's namespace of the publisher, and for a {@code dp_rank} its card declares ({@code
 * identity_mismatch} otherwise). See {@code docs/kv-routing.md} for every outcome counted in
 * {@code continuum_dynamo_kv_events_total{result}}.
 */
public interface KvEventIngest {
    /**
     * One received {@code kv-events} message of {@code publisher}'s subscription, exactly as the ZMTP
     * subscriber hands it to its {@code ZmtpListener} (four frames: topic, publisher ID, sequence, versioned
     * payload). The view is read during this call only.
     */
    void onMessage(PublisherId publisher, ZmtpMessage message);

    /**
     * {@code publisher}'s ranks are no longer backed by a subscription: it departed, or it has been out of
     * session past the 60 s cut-off. Every rank whose events came through it leaves the index (atomically for
     * readers), and their cursors are forgotten, so a later subscription starts from the first event it sees.
     */
    void onSubscriptionClosed(PublisherId publisher);

    /**
     * The registry's live workers, each with the ranks its card declares ({@code LoadTargets.liveWorkers()}),
     * at registry generation {@code generation}. A view older than one already applied is ignored. Workers
     * that left, and ranks a card no longer declares, leave the index atomically before the next event is
     * applied.
     */
    void onFleet(Map<WorkerId, DpRanks> liveWorkers, long generation);
}
