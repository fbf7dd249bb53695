package dev.continuum.router.discovery.watch;

import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.discovery.MutableDynamoRegistry;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.discovery.reducer.DiscoveryReducer;
import dev.continuum.router.discovery.source.WatchSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs passes over one source on its own thread until stopped: open and seed (bounded), apply that first listing as
 * one resync and publish, follow changes and publish after each batch, and when the pass ends for any
 * reason, mark the registry disconnected, back off and start over. The reducer lives as long as the
 * watcher, so {@code first_seen} survives reconnects.
 */
final class DiscoveryWatcher {
    private static final Logger LOG = LoggerFactory.getLogger(DiscoveryWatcher.class);
    /**
     * Events waiting for the watcher thread. Callbacks cannot block the client's I/O threads, and dropping an
     * event would leave the view wrong: past this many the pass is ended and a resync rebuilds everything.
     */
    static final int MAX_PENDING_EVENTS = 65_536;
    private static final AtomicInteger THREAD_IDS = new AtomicInteger();

    private final WatchSource source;
    private final DiscoveryReducer reducer;
    private final MutableDynamoRegistry.Writer writer;
    private final Backoff backoff;
    private final Duration seedTimeout;
    private final LongSupplier nanoTime;
    private final Thread thread;
    private final CountDownLatch stopSignal = new CountDownLatch(1);
    private final AtomicLong completedSeeds = new AtomicLong();
    private volatile boolean stopping;
    private volatile WatchSource.@Nullable Pass currentPass;

    DiscoveryWatcher(WatchSource source, DiscoveryReducer reducer, MutableDynamoRegistry.Writer writer, Backoff backoff,
                     Duration seedTimeout, LongSupplier nanoTime) {
        this.source = source;
        this.reducer = reducer;
        this.writer = writer;
        this.backoff = backoff;
        this.seedTimeout = seedTimeout;
        this.nanoTime = nanoTime;
        this.thread = new Thread(this::run, "dynamo-discovery-" + THREAD_IDS.incrementAndGet());
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /** How many passes have published their seed: a replacement's first resync completes at 1. */
    long completedSeeds() {
        return completedSeeds.get();
    }

    /**
     * Stops following, closes the connection and waits up to {@code grace} for the thread to end.
     *
     * @return whether the thread ended within the grace period (if not it is abandoned: it is a daemon, its
     *         writer is revoked, and it exits at its next check)
     */
    boolean stop(Duration grace) throws InterruptedException {
        stopping = true;
        stopSignal.countDown();
        WatchSource.Pass pass = currentPass;
        if (pass != null) {
            pass.close();
        }
        thread.interrupt();
        thread.join(Math.max(1, grace.toMillis()));
        return !thread.isAlive();
    }

    private void run() {
        while (!stopping) {
            Duration watchesOpenFor = runPass();
            if (stopping) {
                break;
            }
            Duration delay = backoff.afterPass(watchesOpenFor);
            LOG.info("discovery from {} reconnects in {} ms", source.describe(), delay.toMillis());
            try {
                if (stopSignal.await(delay.toMillis(), TimeUnit.MILLISECONDS)) {
                    break;
                }
            } catch (InterruptedException e) {
                break;
            }
        }
        writer.setConnected(false);
    }

    /** Runs one pass; returns how long all its watches stayed open (zero if they never all opened). */
    private Duration runPass() {
        WatchSource.Pass pass;
        try {
            pass = source.open(seedTimeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Duration.ZERO;
        } catch (Exception e) {
            if (!stopping) {
                LOG.warn("discovery from {} could not connect and read: {}", source.describe(),
                        LogSafe.escape(describe(e)));
            }
            return Duration.ZERO;
        }
        currentPass = pass;
        PassQueue queue = new PassQueue();
        long openedAt = -1;
        try {
            if (stopping) {
                return Duration.ZERO;
            }
            reducer.apply(new DiscoveryEvent.Resync(pass.seed()));
            admitRefused(pass);
            writer.publish(reducer.view());
            completedSeeds.incrementAndGet();
            LOG.info("discovery from {} read {} records; following changes", source.describe(), pass.seed().size());
            pass.follow(queue);
            while (!stopping) {
                Object signal = queue.take();
                if (signal == PassQueue.OPENED) {
                    openedAt = nanoTime.getAsLong();
                    writer.setConnected(true);
                } else if (signal instanceof PassQueue.Ended ended) {
                    if (!stopping) {
                        LOG.warn("discovery from {}: {}{}", source.describe(), LogSafe.escape(ended.reason()),
                                ended.cause() == null ? "" : " (" + LogSafe.escape(describe(ended.cause())) + ")");
                    }
                    break;
                } else {
                    applyBatch(pass, queue, signal);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RereadException e) {
            if (!stopping) {
                LOG.warn("discovery from {} could not read refused keys again; resyncing: {}", source.describe(),
                        LogSafe.escape(describe(e))); // describe reports the root cause
            }
        } catch (RuntimeException e) {
            // A reducer bug must not kill discovery: resync from scratch after the backoff.
            LOG.error("discovery from {} failed while applying events; resyncing", source.describe(), e);
        } finally {
            writer.setConnected(false);
            currentPass = null;
            pass.close();
        }
        return openedAt < 0 ? Duration.ZERO : Duration.ofNanos(nanoTime.getAsLong() - openedAt);
    }

    /** Applies {@code first} and every batch already waiting, then publishes once. */
    @SuppressWarnings("unchecked")
    private void applyBatch(WatchSource.Pass pass, PassQueue queue, Object first) throws InterruptedException {
        boolean changed = reducer.applyAll((List<DiscoveryEvent>) first);
        queue.releaseEvents(((List<?>) first).size());
        Object more;
        while ((more = queue.peekEvents()) != null) {
            queue.poll();
            changed |= reducer.applyAll((List<DiscoveryEvent>) more);
            queue.releaseEvents(((List<?>) more).size());
        }
        changed |= admitRefused(pass);
        if (changed) {
            writer.publish(reducer.view());
        }
    }

    /**
     * Reads keys refused at capacity again while the reducer has room for them, oldest refusal first. Each
     * round either admits keys or takes them out of the memory (deleted, now bad), so the rounds are bounded
     * by the memory's size; the cap on rounds is a guard, not a limit the fleet can reach.
     */
    private boolean admitRefused(WatchSource.Pass pass) throws InterruptedException {
        boolean changed = false;
        for (int round = 0; round < MAX_REREAD_ROUNDS; round++) {
            List<String> keys = reducer.admissible();
            if (keys.isEmpty()) {
                break;
            }
            List<DiscoveryEvent> current;
            try {
                current = pass.reread(keys);
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                throw new RereadException(e);
            }
            changed |= reducer.applyAll(current);
            if (reducer.admissible().equals(keys)) {
                break; // the source no longer answers for these keys (its pass is ending): the resync will
            }
        }
        return changed;
    }

    private static final int MAX_REREAD_ROUNDS = 64;

    private static final class RereadException extends RuntimeException {
        RereadException(Exception cause) {
            super(cause);
        }
    }

    private static String describe(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage();
        return root.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }

    /**
     * Hands callbacks from the client's threads to the watcher thread without blocking them. Events are
     * counted; past {@link #MAX_PENDING_EVENTS} further events are dropped and the pass is ended, which the
     * resync of the next pass repairs.
     */
    private static final class PassQueue extends LinkedBlockingQueue<Object> implements WatchSource.PassListener {
        static final Object OPENED = new Object();

        record Ended(String reason, @Nullable Throwable cause) {
        }

        private final AtomicInteger pendingEvents = new AtomicInteger();
        private final AtomicBoolean ended = new AtomicBoolean();

        @Override
        public void opened() {
            if (!ended.get()) {
                add(OPENED);
            }
        }

        @Override
        public void events(List<DiscoveryEvent> events) {
            if (ended.get() || events.isEmpty()) {
                return;
            }
            if (pendingEvents.addAndGet(events.size()) > MAX_PENDING_EVENTS) {
                ended("more than " + MAX_PENDING_EVENTS + " events waiting; resyncing instead", null);
                return;
            }
            add(new ArrayList<>(events));
        }

        @Override
        public void ended(String reason, @Nullable Throwable cause) {
            if (ended.compareAndSet(false, true)) {
                add(new Ended(reason, cause));
            }
        }

        @Nullable Object peekEvents() {
            Object head = peek();
            return head instanceof List<?> ? head : null;
        }

        void releaseEvents(int count) {
            pendingEvents.addAndGet(-count);
        }
    }
}
