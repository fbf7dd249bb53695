package dev.continuum.router.kv.supervisor;

import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.kv.events.KvEventIngest;
import dev.continuum.router.load.ChannelReceiver;
import dev.continuum.router.load.zmtp.ZmtpMessage;
import io.micrometer.core.instrument.Counter;

/**
 * One kv-events subscription's receiver: every message goes to the index's ingest as received (the ingest
 * decodes, checks identity and event order per rank); a closed subscription takes its ranks out of the index.
 * A reconnect needs nothing here: the ingest's per-rank cursors see any events missed meanwhile as a gap.
 */
final class KvEventsReceiver implements ChannelReceiver {
    private final PublisherId publisher;
    private final KvEventIngest ingest;
    private final Counter refusals;

    KvEventsReceiver(PublisherId publisher, KvEventIngest ingest, Counter refusals) {
        this.publisher = publisher;
        this.ingest = ingest;
        this.refusals = refusals;
    }

    @Override
    public void onConnected() {
        // Event order is the ingest's concern (per-rank event_id cursors), not the connection's.
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
        ingest.onSubscriptionClosed(publisher);
    }
}
