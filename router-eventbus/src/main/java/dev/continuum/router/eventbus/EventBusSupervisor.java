package dev.continuum.router.eventbus;

import dev.continuum.router.core.lifecycle.OwnedExecutor;
import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.eventbus.config.EventBusConfig;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the {@link EventBusListener} while {@code dynamo.enabled} and {@code dynamo.event_bus.enabled} are both
 * true, and applies reloads as the section's reload classes say: credentials, grants, limits and TLS files go
 * to the running listener; {@code listen} or the switches stop it and start a new one. A listener that cannot
 * start (a port in use, unreadable TLS files) is logged and tried again every {@link #START_RETRY}; the router
 * keeps serving meanwhile. The {@link EventBus} it hands out survives every restart: it serves the running
 * listener's sessions and covers nothing while none runs.
 *
 * <p>Transitions are serialized on this object; they happen on start, stop and config reloads only.
 */
public final class EventBusSupervisor extends StartStopSupport {
    private static final Logger LOG = LoggerFactory.getLogger(EventBusSupervisor.class);
    /** How often a listener that failed to start is tried again. */
    public static final Duration START_RETRY = Duration.ofSeconds(30);
    /** The listener's own event loops: TLS and relaying are light; two keep one slow peer from stalling all. */
    static final int LISTENER_THREADS = 2;
    private static final long START_WAIT_SECONDS = 10;

    private final MeterRegistry meters;
    private final EventBus bus;
    private final ListenerTimings timings;
    private final LongSupplier nanoTime;
    private final Duration startRetry;
    private final OwnedExecutor scheduler = OwnedExecutor.scheduler("event-bus-supervisor", Duration.ZERO);
    private EventBusConfig config = EventBusConfig.DEFAULTS;
    private boolean wanted;
    private boolean running;
    private @Nullable EventBusListener listener;
    private @Nullable ScheduledFuture<?> retry;

    public EventBusSupervisor(MeterRegistry meters) {
        this(meters, new EventBus(), ListenerTimings.DEFAULTS, System::nanoTime, START_RETRY);
    }

    /** With the bus, protocol timers, clock and start retry of a test. */
    public EventBusSupervisor(MeterRegistry meters, EventBus bus, ListenerTimings timings, LongSupplier nanoTime,
                              Duration startRetry) {
        this.meters = meters;
        this.bus = bus;
        this.timings = timings;
        this.nanoTime = nanoTime;
        this.startRetry = startRetry;
    }

    /** The command API; usable before the start (nothing is covered then). */
    public EventBus bus() {
        return bus;
    }

    /** The running listener, or null while none runs. */
    public synchronized @Nullable EventBusListener listener() {
        return listener;
    }

    /**
     * Applies {@code next}; the listener runs when both switches are on. Before the start it only records the
     * configuration. A reload the running listener refuses (new TLS files it cannot read) is logged, and the
     * listener keeps its configuration.
     */
    public synchronized void reload(boolean dynamoEnabled, EventBusConfig next) {
        EventBusConfig before = config;
        boolean wasWanted = wanted;
        config = next;
        wanted = dynamoEnabled && next.enabled();
        if (!running) {
            return;
        }
        EventBusListener current = listener;
        if (current != null && wanted && wasWanted && before.listen().equals(next.listen())) {
            try {
                current.apply(next);
            } catch (RuntimeException e) {
                LOG.error("dynamo.event_bus reload not applied, the listener keeps its configuration: {}",
                        e.getMessage());
            }
            return;
        }
        if (current == null && wanted == wasWanted && !wanted) {
            return;
        }
        restart();
    }

    @Override
    protected synchronized CompletableFuture<Void> doStart() {
        scheduler.start().join();
        running = true;
        if (wanted) {
            tryStart();
        }
        return CompletableFuture.completedFuture(null);
    }

    private void restart() {
        cancelRetry();
        stopListener();
        if (wanted) {
            tryStart();
        }
    }

    private void tryStart() {
        EventBusListener started;
        try {
            started = new EventBusListener(config, timings, meters, nanoTime, LISTENER_THREADS);
        } catch (RuntimeException e) {
            scheduleRetry(e);
            return;
        }
        try {
            started.start().get(START_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            started.stop();
            return;
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            started.stop();
            scheduleRetry(e);
            return;
        }
        listener = started;
        bus.attach(started.sessions());
    }

    private void scheduleRetry(Exception failure) {
        Throwable cause = failure instanceof java.util.concurrent.ExecutionException && failure.getCause() != null
                ? failure.getCause() : failure;
        LOG.error("event bus listener failed to start; retrying in {} ms: {}", startRetry.toMillis(),
                cause.getMessage());
        retry = scheduler.scheduledExecutor().schedule(this::retryStart, startRetry.toNanos(), TimeUnit.NANOSECONDS);
    }

    private synchronized void retryStart() {
        retry = null;
        if (running && wanted && listener == null) {
            tryStart();
        }
    }

    private void cancelRetry() {
        ScheduledFuture<?> r = retry;
        retry = null;
        if (r != null) {
            r.cancel(false);
        }
    }

    private void stopListener() {
        EventBusListener current = listener;
        listener = null;
        if (current == null) {
            return;
        }
        bus.detach();
        // Sessions end with shutting_down; the agents dial again and find the new listener.
        current.stop().orTimeout(START_WAIT_SECONDS, TimeUnit.SECONDS).exceptionally(e -> null).join();
    }

    @Override
    protected synchronized CompletableFuture<Void> doStop() {
        running = false;
        cancelRetry();
        stopListener();
        return scheduler.stop();
    }

    @Override
    protected String lifecycleName() {
        return "event bus supervisor";
    }
}
