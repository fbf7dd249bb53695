package dev.continuum.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RetryBudgetTest {
    private final AtomicLong now = new AtomicLong(-5_000_000_000L); // nanoTime may be negative

    @Test
    void allowsRatioOfRequestsPlusTheFloor() {
        RetryBudget budget = new RetryBudget(0.1, 1, now::get);
        // Floor: 1 per second over the 10 s window = 10 retries with no traffic at all.
        for (int i = 0; i < 10; i++) {
            assertThat(budget.tryRetry()).isTrue();
        }
        assertThat(budget.tryRetry()).isFalse();
        for (int i = 0; i < 100; i++) {
            budget.onRequest();
        }
        for (int i = 0; i < 10; i++) {
            assertThat(budget.tryRetry()).isTrue();
        }
        assertThat(budget.tryRetry()).isFalse();
    }

    @Test
    void aZeroBudgetNeverRetries() {
        RetryBudget budget = new RetryBudget(0.0, 0, now::get);
        for (int i = 0; i < 1000; i++) {
            budget.onRequest();
        }
        assertThat(budget.tryRetry()).isFalse();
    }

    @Test
    void oldTrafficSlidesOutOfTheWindow() {
        RetryBudget budget = new RetryBudget(0.5, 0, now::get);
        for (int i = 0; i < 10; i++) {
            budget.onRequest();
        }
        for (int i = 0; i < 5; i++) {
            assertThat(budget.tryRetry()).isTrue();
        }
        assertThat(budget.tryRetry()).isFalse();
        now.addAndGet(10_000_000_000L);
        assertThat(budget.tryRetry()).isFalse(); // no requests in the new window
        budget.onRequest();
        budget.onRequest();
        assertThat(budget.tryRetry()).isTrue();
    }
}
