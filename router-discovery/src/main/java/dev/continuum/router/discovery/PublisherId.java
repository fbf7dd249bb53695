package dev.continuum.router.discovery;

import java.util.Objects;

/**
 * An event publisher's identity: the namespace of the watched prefix and the event channel's
 * {@code instance_id}, which is the publisher incarnation's ID (not the worker's instance ID).
 */
public record PublisherId(String namespace, long publisherId) implements Comparable<PublisherId> {
    public PublisherId {
        Objects.requireNonNull(namespace, "namespace");
    }

    /** Unsigned decimal, as the admin API shows it. */
    public String decimal() {
        return Long.toUnsignedString(publisherId);
    }

    @Override
    public int compareTo(PublisherId other) {
        int byNamespace = namespace.compareTo(other.namespace);
        return byNamespace != 0 ? byNamespace : Long.compareUnsigned(publisherId, other.publisherId);
    }

    @Override
    public String toString() {
        return namespace + "/" + Long.toHexString(publisherId);
    }
}
