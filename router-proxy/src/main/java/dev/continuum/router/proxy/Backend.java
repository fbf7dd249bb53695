package dev.continuum.router.proxy;

import dev.continuum.router.core.config.BackendConfig;
import io.netty.util.AsciiString;
import org.jspecify.annotations.Nullable;

/**
 * One backend in one configuration generation: its config (weight, models, timeout, key may
 * change on reload) over long-lived {@link BackendResources}. Requests hold the generation they
 * started with, so an in-flight request finishes on what it started with. Identity equality on
 * purpose: "already tried" checks compare references.
 */
final class Backend implements BackendChooser.Candidate {
    private final int index;
    private final BackendConfig config;
    private final BackendResources resources;
    private final @Nullable AsciiString authorization;

    /**
     * @param index position in its generation, used by the weighted selector
     */
    Backend(int index, BackendConfig config, BackendResources resources) {
        this.index = index;
        this.config = config;
        this.resources = resources;
        this.authorization = config.apiKey() == null ? null : new AsciiString("Bearer " + config.apiKey().reveal());
    }

    int index() {
        return index;
    }

    BackendConfig config() {
        return config;
    }

    BackendResources resources() {
        return resources;
    }

    /** {@code Bearer <api_key>} to send upstream, precomputed; null when the backend has no key. */
    @Nullable AsciiString authorization() {
        return authorization;
    }

    @Override
    public String name() {
        return config.name();
    }

    @Override
    public int inFlight() {
        return resources.inFlight.get();
    }

    /** Routable by health (unknown or healthy) and the breaker would let a call through. */
    boolean available() {
        return resources.health.healthState().routable() && resources.breaker.wouldPermit();
    }

    @Override
    public String toString() {
        return config.name();
    }
}
