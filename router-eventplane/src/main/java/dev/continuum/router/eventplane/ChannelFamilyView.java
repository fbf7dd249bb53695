package dev.continuum.router.eventplane;

import java.util.List;

/** One event-channel family's part of the admin view: its publishers in the registry and its subscriptions. */
public interface ChannelFamilyView {
    /** A family that is not running (the KV supervisor absent). */
    ChannelFamilyView NONE = new ChannelFamilyView() {
        @Override
        public int publishers() {
            return 0;
        }

        @Override
        public List<SubscriptionView> subscriptions() {
            return List.of();
        }
    };

    /** Publishers of the family in the last registry generation, subscribed or not. */
    int publishers();

    /** Running subscriptions, sorted by namespace then publisher_id. */
    List<SubscriptionView> subscriptions();
}
