package dev.continuum.router.eventbus;

import dev.continuum.router.eventbus.config.EventBusConfig;

/**
 * What every request reads at its start: one configuration generation, its credentials and TLS context.
 * Immutable and published through one volatile field, so a request never sees half a reload.
 */
record ListenerState(EventBusConfig config, Credentials credentials, BusTlsContext tls) {
}
