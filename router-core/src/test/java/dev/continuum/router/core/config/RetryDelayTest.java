package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@code retry.base_delay}, {@code max_delay}, {@code exponential_backoff} and {@code jitter} shape each wait. */
class RetryDelayTest {
    private static final long MS = 1_000_000L;

    private static RetryConfig retry(String yaml) {
        return TestConfigs.load(TestConfigs.ONE_BACKEND + yaml).orThrow().retry();
    }

    @Test
    void exponentialBackoffDoublesUpToMaxDelay() {
        RetryConfig r = retry("retry: {base_delay: 100ms, max_delay: 350ms, exponential_backoff: true, jitter: false}");
        assertThat(r.delayNanos(1, 0.5)).isEqualTo(100 * MS);
        assertThat(r.delayNanos(2, 0.5)).isEqualTo(200 * MS);
        assertThat(r.delayNanos(3, 0.5)).isEqualTo(350 * MS);
        assertThat(r.delayNanos(60, 0.5)).as("no overflow at high retry numbers").isEqualTo(350 * MS);
    }

    @Test
    void withoutExponentialBackoffEveryWaitIsTheBase() {
        RetryConfig r = retry("retry: {base_delay: 100ms, exponential_backoff: false, jitter: false}");
        assertThat(r.delayNanos(1, 0.5)).isEqualTo(100 * MS);
        assertThat(r.delayNanos(4, 0.5)).isEqualTo(100 * MS);
    }

    @Test
    void jitterDrawsFromTheUpperHalf() {
        RetryConfig r = retry("retry: {base_delay: 100ms, exponential_backoff: false, jitter: true}");
        assertThat(r.delayNanos(1, 0.0)).isEqualTo(50 * MS);
        assertThat(r.delayNanos(1, 0.999)).isBetween(99 * MS, 100 * MS);
    }

    @Test
    void backoffIsTheOlderNameOfBaseDelayAndZeroRetriesAtOnce() {
        RetryConfig legacy = retry("retry: {backoff: 2s}");
        assertThat(legacy.baseDelay()).isEqualTo(Duration.ofSeconds(2));
        assertThat(legacy.delayNanos(3, 0.1)).as("still one fixed wait").isEqualTo(2_000 * MS);
        assertThat(retry("retry: {}").delayNanos(3, 0.7)).isZero();
    }
}
