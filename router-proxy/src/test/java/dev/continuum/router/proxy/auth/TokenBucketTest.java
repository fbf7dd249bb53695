package dev.continuum.router.proxy.auth;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.RateLimit;
import org.junit.jupiter.api.Test;

class TokenBucketTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void admitsTheBurstThenOnePerInterval() {
        long now = -7 * SECOND;
        TokenBucket b = new TokenBucket(new RateLimit(2, 3), now);
        assertThat(b.tryAcquire(now)).isZero();
        assertThat(b.tryAcquire(now)).isZero();
        assertThat(b.tryAcquire(now)).isZero();
        long wait = b.tryAcquire(now);
        assertThat(wait).isEqualTo(SECOND / 2);
        assertThat(TokenBucket.retryAfterSeconds(wait)).isEqualTo(1);
        assertThat(b.tryAcquire(now + SECOND / 2)).isZero();
        assertThat(b.tryAcquire(now + SECOND / 2)).isPositive();
    }

    @Test
    void refillsNoMoreThanTheBurst() {
        TokenBucket b = new TokenBucket(new RateLimit(10, 2), 0);
        long later = 3600 * SECOND;
        assertThat(b.tryAcquire(later)).isZero();
        assertThat(b.tryAcquire(later)).isZero();
        assertThat(b.tryAcquire(later)).isPositive();
    }

    @Test
    void retryAfterRoundsUpToWholeSeconds() {
        assertThat(TokenBucket.retryAfterSeconds(1)).isEqualTo(1);
        assertThat(TokenBucket.retryAfterSeconds(SECOND)).isEqualTo(1);
        assertThat(TokenBucket.retryAfterSeconds(SECOND + 1)).isEqualTo(2);
        TokenBucket slow = new TokenBucket(RateLimit.perMinute(1), 0);
        assertThat(slow.tryAcquire(0)).isZero();
        assertThat(TokenBucket.retryAfterSeconds(slow.tryAcquire(0))).isEqualTo(60);
    }
}
