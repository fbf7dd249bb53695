package dev.continuum.router.agents;

/**
 * The publishers an event broker may relay to: those its own discovery advertises. A {@code subscribe} for any
 * other endpoint is answered {@code target_not_advertised}, so a router (or whoever holds its credentials)
 * cannot turn the broker into a way into arbitrary in-cluster addresses.
 */
@FunctionalInterface
public interface AdvertisedTargets {
    public boolean advertises(String namespace, String host, int port);
}
