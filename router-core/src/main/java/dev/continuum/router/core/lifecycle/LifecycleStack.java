package dev.continuum.router.core.lifecycle;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts components one after another in the order they are pushed (dependency order) and stops
 * the started ones in reverse. A failed start stops everything already started, in reverse, before
 * the failure is reported. The process's only teardown path.
 *
 * <p>Used from one thread at a time (the process's main thread and then its shutdown hook); it is
 * not a concurrent structure.
 *
 * <p>The process has one stack, which logs each component that joins or leaves it at INFO. A component that
 * keeps a stack of its own parts ({@link #nested}) logs them at DEBUG under its own name, so a log reader sees
 * one stack.
 *
 * <p>Each stop runs on a short-lived thread of its own rather than on the thread that completed
 * the previous stop: that thread is often an event loop that is itself terminating, and a
 * component's stop may block (joining a watcher thread), which must neither stall nor deadlock it.
 */
public final class LifecycleStack {
    private static final Logger LOG = LoggerFactory.getLogger(LifecycleStack.class);

    /** Hears each component join the stack and leave it (tests record the order; operators read the log). */
    public interface Listener {
        Listener NONE = new Listener() {
        };

        default void started(Lifecycle component) {
        }

        default void stopped(Lifecycle component) {
        }
    }

    /** One thread per stop, ending with it: a handful per process lifetime, so nothing to pool or own. */
    private static final Executor STOPPER = task -> {
        Thread t = new Thread(task, "continuum-lifecycle-stop");
        t.setDaemon(true);
        t.start();
    };

    private final Deque<Lifecycle> started = new ArrayDeque<>();
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();
    private final Listener listener;
    private final Logger log;
    /** A component's inner stack: logged at DEBUG under its owner's name. */
    private final boolean nested;
    private boolean stopping;

    public LifecycleStack() {
        this(Listener.NONE);
    }

    public LifecycleStack(Listener listener) {
        this(listener, LOG, false);
    }

    private LifecycleStack(Listener listener, Logger log, boolean nested) {
        this.listener = listener;
        this.log = log;
        this.nested = nested;
    }

    /** A stack of {@code owner}'s own parts, inside a component of the process's stack: logged at DEBUG as {@code owner}. */
    public static LifecycleStack nested(Class<?> owner) {
        return new LifecycleStack(Listener.NONE, LoggerFactory.getLogger(owner), true);
    }

    private void note(String what, Lifecycle component) {
        if (nested) {
            log.debug("{} part {}", what, component);
        } else {
            log.info("{} {}", what, component);
        }
    }

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
        note("started", component);
        listener.started(component);
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
            chain = chain.thenComposeAsync(ignored -> component.stop(), STOPPER).thenRun(() -> {
                note("stopped", component);
                listener.stopped(component);
            });
        }
        chain.whenComplete((ignored, failure) -> stopped.complete(null));
        return stopped;
    }

    private synchronized @Nullable Lifecycle pollStarted() {
        return started.poll();
    }
}
