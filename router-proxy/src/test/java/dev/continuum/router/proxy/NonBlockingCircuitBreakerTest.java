package dev.continuum.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.CircuitBreakerConfig;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class NonBlockingCircuitBreakerTest {
    private final AtomicLong now = new AtomicLong(1_000);

    private CircuitBreaker breaker(int failures, double rate, int minimum, int halfOpenMax, int successes) {
        return CircuitBreaker.create(new CircuitBreakerConfig(true, failures, rate, minimum, Duration.ofSeconds(10),
                Duration.ofSeconds(5), halfOpenMax, successes), now::get);
    }

    private void advance(Duration d) {
        now.addAndGet(d.toNanos());
    }

    @Test
    void opensAfterConsecutiveFailures() {
        CircuitBreaker b = breaker(3, 1.0, 1000, 1, 1);
        b.onFailure(b.tryAcquire());
        b.onFailure(b.tryAcquire());
        b.onSuccess(b.tryAcquire()); // a success resets the run
        b.onFailure(b.tryAcquire());
        b.onFailure(b.tryAcquire());
        assertThat(b.state()).isEqualTo(CircuitState.CLOSED);
        b.onFailure(b.tryAcquire());
        assertThat(b.state()).isEqualTo(CircuitState.OPEN);
        assertThat(b.tryAcquire()).isEqualTo(CircuitBreaker.NO_PERMIT);
        assertThat(b.wouldPermit()).isFalse();
    }

    @Test
    void opensOnFailureRateOnceMinimumRequestsWereSeen() {
        CircuitBreaker b = breaker(100, 0.5, 4, 1, 1);
        b.onFailure(b.tryAcquire());
        b.onSuccess(b.tryAcquire());
        b.onFailure(b.tryAcquire());
        assertThat(b.state()).isEqualTo(CircuitState.CLOSED); // 3 < minimum
        b.onSuccess(b.tryAcquire());
        assertThat(b.state()).isEqualTo(CircuitState.CLOSED); // successes do not trip
        b.onFailure(b.tryAcquire());
        assertThat(b.state()).isEqualTo(CircuitState.OPEN); // 3 of 5
    }

    @Test
    void countsOnlyWithinTheWindow() {
        CircuitBreaker b = breaker(2, 1.0, 1000, 1, 1);
        b.onFailure(b.tryAcquire());
        advance(Duration.ofSeconds(11));
        b.onFailure(b.tryAcquire());
        assertThat(b.state()).isEqualTo(CircuitState.CLOSED);
        b.onFailure(b.tryAcquire());
        assertThat(b.state()).isEqualTo(CircuitState.OPEN);
    }

    @Test
    void halfOpensAfterTheTimeoutWithLimitedProbesAndClosesOnSuccesses() {
        CircuitBreaker b = breaker(1, 1.0, 1000, 2, 2);
        b.onFailure(b.tryAcquire());
        advance(Duration.ofSeconds(4));
        assertThat(b.tryAcquire()).isEqualTo(CircuitBreaker.NO_PERMIT);
        advance(Duration.ofSeconds(1));

        long p1 = b.tryAcquire();
        long p2 = b.tryAcquire();
        assertThat(b.state()).isEqualTo(CircuitState.HALF_OPEN);
        assertThat(p1).isPositive();
        assertThat(p2).isEqualTo(p1);
        assertThat(b.tryAcquire()).isEqualTo(CircuitBreaker.NO_PERMIT);
        b.onSuccess(p1);
        assertThat(b.state()).isEqualTo(CircuitState.HALF_OPEN);
        b.onSuccess(p2);
        assertThat(b.state()).isEqualTo(CircuitState.CLOSED);
    }

    @Test
    void anyHalfOpenFailureReopens() {
        CircuitBreaker b = breaker(1, 1.0, 1000, 2, 2);
        b.onFailure(b.tryAcquire());
        advance(Duration.ofSeconds(5));
        long p = b.tryAcquire();
        b.onFailure(p);
        assertThat(b.state()).isEqualTo(CircuitState.OPEN);
        assertThat(b.tryAcquire()).isEqualTo(CircuitBreaker.NO_PERMIT);
    }

    @Test
    void ignoredProbesFreeTheirSlotAndStalePermitsCountForNothing() {
        CircuitBreaker b = breaker(1, 1.0, 1000, 1, 1);
        long closedPermit = b.tryAcquire();
        b.onFailure(b.tryAcquire());
        advance(Duration.ofSeconds(5));
        long probe = b.tryAcquire();
        assertThat(b.tryAcquire()).isEqualTo(CircuitBreaker.NO_PERMIT);
        b.onIgnored(probe);
        // A closed-state request answering late must neither close nor reopen the half-open breaker.
        b.onFailure(closedPermit);
        b.onSuccess(closedPermit);
        assertThat(b.state()).isEqualTo(CircuitState.HALF_OPEN);
        long again = b.tryAcquire();
        assertThat(again).isEqualTo(probe);
        b.onSuccess(again);
        assertThat(b.state()).isEqualTo(CircuitState.CLOSED);
        b.onFailure(probe); // from a finished round: ignored
        assertThat(b.state()).isEqualTo(CircuitState.CLOSED);
    }

    @Test
    void aDisabledBreakerNeverOpens() {
        CircuitBreaker b = CircuitBreaker.create(new CircuitBreakerConfig(false, 1, 0.1, 1, Duration.ofSeconds(1),
                Duration.ofSeconds(1), 1, 1), now::get);
        for (int i = 0; i < 10; i++) {
            b.onFailure(b.tryAcquire());
        }
        assertThat(b.state()).isEqualTo(CircuitState.CLOSED);
        assertThat(b.tryAcquire()).isNotEqualTo(CircuitBreaker.NO_PERMIT);
    }
}
