package dev.continuum.router.kv.supervisor;

import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.kv.events.KvEventIngest;
import dev.continuum.router.eventplane.ChannelReceiver;
import dev.continuum.router.eventplane.zmtp.ZmtpMessage;
import io.micrometer.core.instrument.Counter;

/**
 * One kv-events subscription's receiver: every message goes to the index's ingest as received (the ingest
 * decodes, checks identity and event order per rank). A departed publisher's subscription takes its ranks out
 * of the index; a subscription stopped to be replaced (a transport switch, a changed record) leaves ranks and
 * cursors to its successor. A reconnect needs nothing here: the ingest's per-rank cursors see any events missed
 * meanwhile as a gap. Sessions are reported to the {@link StaleSubscriptions} cut-off.
 *
 * <p>Confined to the subscription's event loop, like every {@code ChannelReceiver}.
 */
final class KvEventsReceiver implements ChannelReceiver {
    private final PublisherId publisher;
    private final KvEventIngest ingest;
    private final Counter refusals;
    private final StaleSubscriptions stale;
    private boolean inSession;

    KvEventsReceiver(PublisherId publisher, KvEventIngest ingest, Counter refusals, StaleSubscriptions stale) {
        this.publisher = publisher;
        this.ingest = ingest;
        this.refusals = refusals;
        this.stale = stale;
    }

    @Override
    public void onConnected() {
        // Event order is the ingest's concern (per-rank event_id cursors), not the connection's.
        inSession = true;
        stale.connected(publisher);
    }

    @Override
    public void onDisconnected() {
        endSession();
    }

    @Override
    public void onMessage(ZmtpMessage message) {
        ingest.onMessage(publisher, message);
    }

    @Override
    public void onTransportRefused() {
        refusals.increment();
    }

    @Override
    public void onStopped(boolean departed) {
        if (departed) {
            inSession = false;
            stale.forget(publisher);
            ingest.onSubscriptionClosed(publisher);
        } else {
            endSession();
        }
    }

    private void endSession() {
        if (inSession) {
            inSession = false;
            stale.released(publisher);
        }
    }
}
