package dev.continuum.router.core.lifecycle;

import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link Lifecycle} state machine, so a component writes only {@link #doStart()} and
 * {@link #doStop()}. Transitions are serialized on this object's monitor: they happen a handful of
 * times per process, never on a request path, so a lock is the simplest correct choice.
 *
 * <p>A failed start runs {@link #doStop()} so that whatever the start acquired is released, then
 * ends {@code STOPPED}; the start future carries the failure.
 */
public abstract class StartStopSupport implements Lifecycle {
    private static final Logger LOG = LoggerFactory.getLogger(StartStopSupport.class);

    private LifecycleState state = LifecycleState.NEW;
    private @Nullable CompletableFuture<Void> startFuture;
    private @Nullable CompletableFuture<Void> stopFuture;

    /** Acquires what the component runs on; the future completes when it serves. */
    protected abstract CompletableFuture<Void> doStart() throws Exception;

    /**
     * Releases everything the component owns. Called once, after a successful start, after a
     * failed one, or never when the component was never started.
     */
    protected abstract CompletableFuture<Void> doStop() throws Exception;

    /** A short name for log lines about this component's transitions. */
    protected String lifecycleName() {
        return getClass().getSimpleName();
    }

    @Override
    public final synchronized CompletableFuture<Void> start() {
        if (stopFuture == null && startFuture != null) {
            return startFuture;
        }
        if (state != LifecycleState.NEW) {
            return CompletableFuture.failedFuture(
                    new IllegalStateException(lifecycleName() + ": cannot start when " + state));
        }
        state = LifecycleState.STARTING;
        CompletableFuture<Void> started;
        try {
            started = doStart();
        } catch (Exception | LinkageError e) {
            started = CompletableFuture.failedFuture(e);
        }
        CompletableFuture<Void> result = new CompletableFuture<>();
        startFuture = result;
        started.whenComplete((ignored, failure) -> onStartDone(result, failure));
        return result;
    }

    private void onStartDone(CompletableFuture<Void> result, @Nullable Throwable failure) {
        if (failure == null) {
            synchronized (this) {
                if (state == LifecycleState.STARTING) {
                    state = LifecycleState.STARTED;
                }
            }
            result.complete(null);
            return;
        }
        // Release what the failed start acquired before reporting it, so a caller that reacts to
        // the failure (by stopping everything else) never races a half-started component.
        stop().whenComplete((ignored, stopFailure) -> result.completeExceptionally(failure));
    }

    @Override
    public final CompletableFuture<Void> stop() {
        CompletableFuture<Void> result;
        boolean runStop;
        synchronized (this) {
            if (stopFuture != null) {
                return stopFuture;
            }
            result = new CompletableFuture<>();
            stopFuture = result;
            runStop = state != LifecycleState.NEW;
            state = runStop ? LifecycleState.STOPPING : LifecycleState.STOPPED;
        }
        if (!runStop) {
            result.complete(null);
            return result;
        }
        CompletableFuture<Void> stopping;
        try {
            stopping = doStop();
        } catch (Exception | LinkageError e) {
            stopping = CompletableFuture.failedFuture(e);
        }
        stopping.whenComplete((ignored, failure) -> {
            if (failure != null) {
                LOG.warn("{}: stop failed; its resources may not all be released", lifecycleName(), failure);
            }
            synchronized (this) {
                state = LifecycleState.STOPPED;
            }
            result.complete(null);
        });
        return result;
    }

    /** The {@link #lifecycleName()}, so stacks and logs name components readably. */
    @Override
    public String toString() {
        return lifecycleName();
    }

    @Override
    public final synchronized LifecycleState state() {
        return state;
    }
}
