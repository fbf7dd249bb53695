package dev.continuum.router.proxy;

import dev.continuum.router.proxy.auth.RateDecision;
import dev.continuum.router.core.config.RetryConfig;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The backends one phase of a request may try (the standard candidates, a plan's pool, or what is left
 * for a fallback), which were tried, and how many attempts were made. A fallback starts a new phase with a
 * fresh {@code max_attempts}.
 */
final class Candidates {
    /** A backend picked for an attempt, with the breaker permit it holds. */
    record Pick(Backend backend, long permit) {
    }

    private final ProxyState state;
    private final List<Backend> pool;
    private final boolean bypassLimits;
    /** The request's {@code ConsistentHash} key, 0 for none. */
    private final long affinityKey;
    /** The {@link BackendChooser}'s answer for this phase, or null: the strategy picks. */
    private final BackendChooser.@Nullable Choice choice;
    private final List<Backend> tried = new ArrayList<>(2);
    private int attempts;
    /** The shortest wait a per-backend rate limit asked for, or 0. */
    private long backendRetryAfterSeconds;

    Candidates(ProxyState state, List<Backend> pool, boolean bypassLimits) {
        this(state, pool, bypassLimits, 0);
    }

    Candidates(ProxyState state, List<Backend> pool, boolean bypassLimits, long affinityKey) {
        this(state, pool, bypassLimits, affinityKey, null);
    }

    Candidates(ProxyState state, List<Backend> pool, boolean bypassLimits, long affinityKey,
            BackendChooser.@Nullable Choice choice) {
        this.state = state;
        this.pool = pool;
        this.bypassLimits = bypassLimits;
        this.affinityKey = affinityKey;
        this.choice = choice;
    }

    List<Backend> pool() {
        return pool;
    }

    int attempts() {
        return attempts;
    }

    long backendRetryAfterSeconds() {
        return backendRetryAfterSeconds;
    }

    /**
     * Picks among untried available candidates and counts the attempt; the pick holds a breaker permit and
     * the backend's rate-limit token. Null when none can take it.
     */
    @Nullable Pick next() {
        List<Backend> avail = null;
        for (Backend c : pool) {
            if (!wasTried(c) && c.available()) {
                if (avail == null) {
                    avail = new ArrayList<>(pool.size());
                }
                avail.add(c);
            }
        }
        while (avail != null && !avail.isEmpty()) {
            Backend b = pick(avail);
            long p = b.resources().breaker.tryAcquire();
            if (p == CircuitBreaker.NO_PERMIT) {
                avail.remove(b);
                continue;
            }
            if (!bypassLimits) {
                RateDecision d = state.limits.checkBackend(b.name());
                if (!d.allowed()) {
                    b.resources().breaker.onIgnored(p);
                    backendRetryAfterSeconds = backendRetryAfterSeconds == 0 ? d.retryAfterSeconds()
                            : Math.min(backendRetryAfterSeconds, d.retryAfterSeconds());
                    avail.remove(b);
                    continue;
                }
            }
            attempts++;
            tried.add(b);
            return new Pick(b, p);
        }
        return null;
    }

    /** The chooser's pick when it makes one, else the configured strategy's. */
    private Backend pick(List<Backend> avail) {
        if (choice != null) {
            int i = choice.choose(avail);
            if (i >= 0 && i < avail.size()) {
                return avail.get(i);
            }
        }
        return state.selector.pick(avail, affinityKey);
    }

    boolean wasTried(Backend b) {
        for (int i = 0; i < tried.size(); i++) {
            if (tried.get(i) == b) {
                return true;
            }
        }
        return false;
    }

    /** Of {@code from}, the backends this phase did not try, in order. */
    List<Backend> untried(List<Backend> from) {
        List<Backend> rest = new ArrayList<>(from.size());
        for (Backend c : from) {
            if (!wasTried(c)) {
                rest.add(c);
            }
        }
        return rest;
    }

    /** Whether one more attempt may be made now; consumes a retry from the budget when it says yes. */
    boolean takeRetry() {
        RetryConfig rc = state.config.retry();
        if (!rc.enabled() || attempts >= rc.maxAttempts()) {
            return false;
        }
        boolean alternative = false;
        for (Backend c : pool) {
            if (!wasTried(c) && c.available()) {
                alternative = true;
                break;
            }
        }
        return alternative && state.retryBudget.tryRetry();
    }
}
