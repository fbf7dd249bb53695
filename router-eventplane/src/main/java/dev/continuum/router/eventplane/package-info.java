/**
 * The fleet's event plane: event-channel subscriptions of any family (kv_metrics, kv-events) that follow the
 * publishers discovery lists, keyed by {@link dev.continuum.router.eventplane.Transport} kind, with their dialer,
 * reconnect backoff and admin views. A subscription hands messages to a {@code ChannelReceiver} its consumer
 * supplies; nothing here knows what a message means.
 */
@NullMarked
package dev.continuum.router.eventplane;

import org.jspecify.annotations.NullMarked;
