/**
 * The event-bus listener in-cluster agents dial into (HTTP/2 over TLS 1.3), its credentials, sessions and
 * control streams; the wire contract is docs/event-bus-protocol.md.
 */
@NullMarked
package dev.continuum.router.eventbus;

import org.jspecify.annotations.NullMarked;
