package dev.continuum.router.proxy;

import dev.continuum.router.core.config.HealthCheckConfig;
import dev.continuum.router.core.config.Secret;
import dev.continuum.router.core.lifecycle.StartStopSupport;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Active health checks of one backend: probe {@code endpoint} every {@code interval} with
 * {@code timeout}. States ({@link HealthState}):
 *
 * <ul>
 *   <li>{@code unknown} at start, routable; checks disabled leave it there;</li>
 *   <li>a 2xx answer: {@code unknown}/{@code warming_up} become {@code healthy} at once; {@code down}
 *       needs {@code healthy_threshold} consecutive successes;</li>
 *   <li>a 503 answer: {@code warming_up}, probed every {@code warmup_check_interval}; warming up for
 *       longer than {@code max_warmup_duration} makes it {@code down} (probed at {@code interval});</li>
 *   <li>anything else, or no answer within {@code timeout}: a failure; {@code unhealthy_threshold}
 *       consecutive failures make it {@code down}.</li>
 * </ul>
 *
 * Passive signals from real traffic (connect failures, 5xx) feed the circuit breaker, not this
 * state. Probing and all state changes run on one event loop (single writer); readers see the
 * volatile state.
 *
 * <p>A lifecycle component owned by its backend's resources: start schedules the first probe, stop
 * cancels the pending one and completes once that ran on the event loop.
 */
final class HealthChecker extends StartStopSupport {
    private static final Logger log = LoggerFactory.getLogger(HealthChecker.class);
    private static final String MODELS_ENDPOINT = "/v1/models";

    private final String backend;
    private final BackendEndpoint endpoint;
    private final ProbeClient client;
    private final EventLoop loop;
    private final LongSupplier nanoClock;
    private volatile HealthCheckConfig config;
    private volatile @Nullable Secret apiKey;
    private volatile Duration connectTimeout;
    private volatile HealthState state = HealthState.UNKNOWN;
    private volatile List<String> reportedModels = List.of();

    // Confined to the event loop.
    private int successes;
    private int failures;
    private long warmupStart;
    private boolean warmupExpired;
    private @Nullable ScheduledFuture<?> next;
    private boolean stopped;
    private int generation;

    HealthChecker(String backend, BackendEndpoint endpoint, ProbeClient client, EventLoop loop, LongSupplier nanoClock,
                  HealthCheckConfig config, @Nullable Secret apiKey, Duration connectTimeout) {
        this.backend = backend;
        this.endpoint = endpoint;
        this.client = client;
        this.loop = loop;
        this.nanoClock = nanoClock;
        this.config = config;
        this.apiKey = apiKey;
        this.connectTimeout = connectTimeout;
    }

    /** The backend's health (not to be confused with this checker's own lifecycle {@link #state()}). */
    HealthState healthState() {
        return state;
    }

    /** Models the backend listed at its last successful {@code /v1/models} probe. */
    List<String> reportedModels() {
        return reportedModels;
    }

    @Override
    protected CompletableFuture<Void> doStart() {
        loop.execute(() -> {
            if (!stopped && config.enabled()) {
                schedule(Duration.ZERO);
            }
        });
        return CompletableFuture.completedFuture(null);
    }

    @Override
    protected CompletableFuture<Void> doStop() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            loop.execute(() -> {
                stopped = true;
                cancel();
                done.complete(null);
            });
        } catch (RejectedExecutionException terminated) {
            // The loop is gone, and with it every probe it had scheduled.
            done.complete(null);
        }
        return done;
    }

    @Override
    protected String lifecycleName() {
        return "health checks of " + backend;
    }

    /** New settings take effect from the next probe; the current state is kept. */
    void reconfigure(HealthCheckConfig newConfig, @Nullable Secret newApiKey, Duration newConnectTimeout) {
        boolean changed = !newConfig.equals(config) || !Objects.equals(newApiKey, apiKey)
                || !newConnectTimeout.equals(connectTimeout);
        this.config = newConfig;
        this.apiKey = newApiKey;
        this.connectTimeout = newConnectTimeout;
        if (!changed) {
            return;
        }
        loop.execute(() -> {
            if (stopped) {
                return;
            }
            cancel();
            generation++;
            if (newConfig.enabled()) {
                schedule(state == HealthState.WARMING_UP ? newConfig.warmupCheckInterval() : newConfig.interval());
            } else {
                transition(HealthState.UNKNOWN);
            }
        });
    }

    private void cancel() {
        if (next != null) {
            next.cancel(false);
            next = null;
        }
    }

    private void schedule(Duration delay) {
        int gen = generation;
        next = loop.schedule(() -> probe(gen), delay.toNanos(), TimeUnit.NANOSECONDS);
    }

    private void probe(int gen) {
        if (stopped || gen != generation) {
            return;
        }
        HealthCheckConfig c = config;
        boolean parseModels = MODELS_ENDPOINT.equals(c.endpoint());
        client.probe(loop, endpoint, c.endpoint(), apiKey, connectTimeout, c.timeout(), parseModels)
                .thenAccept(r -> {
                    if (stopped || gen != generation) {
                        return;
                    }
                    onResult(r, c);
                    schedule(state == HealthState.WARMING_UP ? c.warmupCheckInterval() : c.interval());
                });
    }

    private void onResult(ProbeClient.ProbeResult r, HealthCheckConfig c) {
        long now = nanoClock.getAsLong();
        if (r.status() / 100 == 2) {
            failures = 0;
            successes++;
            warmupExpired = false;
            if (r.models() != null) {
                reportedModels = r.models();
            }
            if (state != HealthState.DOWN || successes >= c.healthyThreshold()) {
                transition(HealthState.HEALTHY);
            }
        } else if (r.status() == 503) {
            successes = 0;
            if (state != HealthState.WARMING_UP && !warmupExpired) {
                warmupStart = now;
                transition(HealthState.WARMING_UP);
            } else if (state == HealthState.WARMING_UP && now - warmupStart > c.maxWarmupDuration().toNanos()) {
                warmupExpired = true;
                transition(HealthState.DOWN);
            }
        } else {
            successes = 0;
            failures++;
            if (failures >= c.unhealthyThreshold()) {
                transition(HealthState.DOWN);
            }
        }
    }

    private void transition(HealthState to) {
        HealthState from = state;
        if (from != to) {
            state = to;
            if (to != HealthState.DOWN) {
                // Counting restarts in the new state (a down backend climbs back with fresh successes).
                failures = 0;
            }
            log.info("backend {} health {} -> {}", backend, from.name().toLowerCase(java.util.Locale.ROOT),
                    to.name().toLowerCase(java.util.Locale.ROOT));
        }
    }
}
