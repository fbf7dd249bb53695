package dev.continuum.router.discovery.config;

import dev.continuum.router.core.config.ConfigNode;
import java.time.Duration;

/** {@code watch_reconnect_backoff}, shared by the etcd and Kubernetes sources. */
final class BackoffBinder {
    private BackoffBinder() {
    }

    static BackoffConfig bind(ConfigNode backoff) {
        ConfigNode initialNode = backoff.get("initial");
        Duration initial = initialNode.asPositiveDuration(BackoffConfig.DEFAULT_INITIAL);
        ConfigNode maxNode = backoff.get("max");
        Duration max = maxNode.asPositiveDuration(BackoffConfig.DEFAULT_MAX);
        if (max.compareTo(initial) < 0) {
            (maxNode.isPresent() ? maxNode : initialNode).error(max.toMillis() + " ms is below initial ("
                    + initial.toMillis() + " ms) (expected: max >= initial)");
            max = initial;
        }
        return new BackoffConfig(initial, max);
    }
}
