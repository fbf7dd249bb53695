/**
 * The in-cluster agents that dial the router's event bus, each run as its own process: the event broker, which
 * relays only the ZMQ publishers its own discovery advertises, and the kv-listener, which relays its configured
 * backends' SSE KV-event streams. Their config files are read through the foundation's public
 * {@link dev.continuum.router.core.config.ConfigDocument}.
 */
@NullMarked
package dev.continuum.router.agents;

import org.jspecify.annotations.NullMarked;
