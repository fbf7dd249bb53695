package dev.continuum.router.discovery;

import java.util.Objects;

/**
 * A worker's identity: the Dynamo namespace it was found under (always taken from the watched prefix, never
 * from a payload field) and its instance ID, an unsigned 64-bit value held in a {@code long}.
 */
public record WorkerId(String namespace, long instanceId) implements Comparable<WorkerId> {
    public WorkerId {
        Objects.requireNonNull(namespace, "namespace");
    }

    /** Lowercase hex without padding, the registry's and the admin API's spelling ({@code 1a7f2b}). */
    public String hex() {
        return Long.toHexString(instanceId);
    }

    /** Unsigned decimal, the spelling {@code dynamo.frontend} accepts in {@code x-dynamo-*} headers. */
    public String decimal() {
        return Long.toUnsignedString(instanceId);
    }

    /** By namespace, then by instance ID as an unsigned number. */
    @Override
    public int compareTo(WorkerId other) {
        int byNamespace = namespace.compareTo(other.namespace);
        return byNamespace != 0 ? byNamespace : Long.compareUnsigned(instanceId, other.instanceId);
    }

    @Override
    public String toString() {
        return namespace + "/" + hex();
    }
}
