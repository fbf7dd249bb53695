package dev.continuum.router.proxy.auth;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.RateLimit;
import org.junit.jupiter.api.Test;

class BoundedBucketMapTest {

    @Test
    void neverHoldsMoreThanItsCap() {
        BoundedBucketMap<Integer> map = new BoundedBucketMap<>(new RateLimit(1, 1), 1000);
        for (int i = 0; i < 100_000; i++) {
            map.bucket(i, 0);
            assertThat(map.size()).isLessThanOrEqualTo(1000);
        }
    }

    @Test
    void keepsARecentlyUsedBucketAcrossAGeneration() {
        BoundedBucketMap<Integer> map = new BoundedBucketMap<>(new RateLimit(1, 1), 10);
        TokenBucket hot = map.bucket(-1, 0);
        for (int i = 0; i < 100; i++) {
            map.bucket(i, 0);
            assertThat(map.bucket(-1, 0)).isSameAs(hot);
        }
    }
}
