package dev.continuum.router.discovery.kubernetes;

import java.time.Duration;
import java.util.Objects;

/**
 * Bounds and timers of the Kubernetes sources (production values in {@link #defaults()}, docs/decisions.md); tests
 * shrink the timers so a "290 s" close takes milliseconds.
 *
 * @param podPageSize      Pods per list page (500)
 * @param maxPods          the most Pods held (16384); a list beyond it fails the pass
 * @param watchTimeout     the server-side close requested with {@code timeoutSeconds} (290 s)
 * @param idleDeadline     a watch that delivers nothing for this long is ended (320 s): a half-open connection
 *                         must not keep {@code connected} at 1
 * @param requestTimeout   client build, every list page and the watch open share this budget (30 s)
 */
public record KubernetesLimits(int podPageSize, int maxPods, Duration watchTimeout, Duration idleDeadline,
                               Duration requestTimeout) {
    public static final int POD_PAGE_SIZE = 500;
    public static final int MAX_PODS = 16_384;
    public static final Duration WATCH_TIMEOUT = Duration.ofSeconds(290);
    public static final Duration IDLE_DEADLINE = Duration.ofSeconds(320);
    public static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    public KubernetesLimits {
        if (podPageSize < 1) {
            throw new IllegalArgumentException("podPageSize: " + podPageSize + " (expected: > 0)");
        }
        if (maxPods < 1) {
            throw new IllegalArgumentException("maxPods: " + maxPods + " (expected: > 0)");
        }
        Objects.requireNonNull(watchTimeout, "watchTimeout");
        Objects.requireNonNull(idleDeadline, "idleDeadline");
        Objects.requireNonNull(requestTimeout, "requestTimeout");
    }

    public static KubernetesLimits defaults() {
        return new KubernetesLimits(POD_PAGE_SIZE, MAX_PODS, WATCH_TIMEOUT, IDLE_DEADLINE, REQUEST_TIMEOUT);
    }

    /** {@code timeoutSeconds} on the wire: whole seconds, at least 1 (tests use shorter timers server-side). */
    long watchTimeoutSeconds() {
        return Math.max(1, watchTimeout.toSeconds());
    }

    public KubernetesLimits withTimers(Duration watch, Duration idle) {
        return new KubernetesLimits(podPageSize, maxPods, watch, idle, requestTimeout);
    }

    public KubernetesLimits withIdleDeadline(Duration deadline) {
        return new KubernetesLimits(podPageSize, maxPods, watchTimeout, deadline, requestTimeout);
    }

    public KubernetesLimits withPods(int pageSize, int max) {
        return new KubernetesLimits(pageSize, max, watchTimeout, idleDeadline, requestTimeout);
    }
}
