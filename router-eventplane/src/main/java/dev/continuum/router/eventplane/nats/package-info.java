/**
 * The event plane's NATS transport (docs/nats.md): the {@code dynamo.nats} connection settings, the one shared
 * NATS connection of the process, and the subscriptions of event channels whose discovery record names the
 * {@code Nats} transport. The router only subscribes: it never publishes on the fleet's subjects.
 */
@NullMarked
package dev.continuum.router.eventplane.nats;

import org.jspecify.annotations.NullMarked;
