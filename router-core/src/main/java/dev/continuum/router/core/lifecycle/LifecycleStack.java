package dev.continuum.router.core.lifecycle;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * Starts components one after another in the order they are pushed (dependency order) and stops
 * the started ones in reverse. A failed start stops everything already started, in reverse, before
 * the failure is reported. The process's only teardown path.
 *
 * <p>Used from one thread at a time (the process's main thread and then its shutdown hook); it is
 * not a concurrent structure.
 *
 * <p>Each stop runs on a short-lived thread of its own rather than on the thread that completed
 * the previous stop: that thread is often an event loop that is itself terminating, and a
 * component's stop may block (joining a watcher thread), which must neither stall nor deadlock it.
 */
public final class LifecycleStack {
    /** One thread per stop, ending with it: a handful per process lifetime, so nothing to pool or own. */
    private static final Executor STOPPER = task -> {
        Thread t = new Thread(task, "continuum-lifecycle-stop");
        t.setDaemon(true);
        t.start();
    };

    private final Deque<Lifecycle> started = new ArrayDeque<>();
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();
    private boolean stopping;

    /**
     * Starts {@code component} and waits for it; on success it joins the stack, so it stops before
     * everything pushed earlier. On failure the whole stack is stopped and the failure rethrown.
     */
    public synchronized <T extends Lifecycle> T push(T component) {
        if (stopping) {
            throw new IllegalStateException("stack is stopping; not starting " + component);
        }
        try {
            component.start().join();
        } catch (CompletionException e) {
            component.stop().join();
            stopAll().join();
            throw e;
        }
        started.push(component);
        return component;
    }

    /** Stops every started component in reverse start order; idempotent, never fails. */
    public CompletableFuture<Void> stopAll() {
        synchronized (this) {
            if (stopping) {
                return stopped;
            }
            stopping = true;
        }
        // Sequential and in reverse: a component may still use what was started before it until
        // its own stop completes (the HTTP server drains through the picker and the load store).
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        @Nullable Lifecycle next;
        while ((next = pollStarted()) != null) {
            Lifecycle component = next;
            chain = chain.thenComposeAsync(ignored -> component.stop(), STOPPER);
        }
        chain.whenComplete((ignored, failure) -> stopped.complete(null));
        return stopped;
    }

    private synchronized @Nullable Lifecycle pollStarted() {
        return started.poll();
    }
}
