package dev.continuum.router.core.config;

/**
 * A read-only view of one YAML subtree after {@code ${VAR}} interpolation, carrying its dotted path so
 * every problem can name where it is. Implemented by the loader; {@link DynamoSection}s read their
 * part through it. Typed getters report a wrong type or a bad value to the {@link Problems} they are
 * given and return the default, so one pass finds every problem. Each key read is marked used;
 * keys never read are reported as unknown (with the nearest known key) after binding.
 */
public interface ConfigNode {
    /** Dotted path of this node, for example {@code dynamo.discovery.etcd}. */
    String path();
}
