package dev.continuum.router.discovery;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One writer at a time (serialized by {@code this}), lock-free readers. The snapshot is swapped before the
 * generation counter moves, so whoever observes generation g reads a snapshot at least as new as g.
 */
final class AtomicDynamoRegistry implements MutableDynamoRegistry {
    private static final Logger LOG = LoggerFactory.getLogger(AtomicDynamoRegistry.class);

    private volatile DynamoSnapshot current = DynamoSnapshot.disabled(0);
    private volatile long generation;
    private final Object generationMonitor = new Object();
    private final List<CoalescingSubscription> subscriptions = new CopyOnWriteArrayList<>();
    private final MixedNamespaceWarnings mixedWarnings = new MixedNamespaceWarnings();
    private WriterImpl writer = new WriterImpl();

    @Override
    public DynamoSnapshot snapshot() {
        return current;
    }

    @Override
    public long generation() {
        return generation;
    }

    @Override
    public long awaitGeneration(long after, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (generationMonitor) {
            while (generation <= after) {
                long remainingMillis = (deadline - System.nanoTime()) / 1_000_000;
                if (remainingMillis <= 0) {
                    break;
                }
                generationMonitor.wait(remainingMillis);
            }
            return generation;
        }
    }

    @Override
    public Subscription subscribe(Executor executor, LongConsumer listener) {
        CoalescingSubscription subscription = new CoalescingSubscription(executor, listener);
        subscriptions.add(subscription);
        return subscription;
    }

    @Override
    public synchronized Writer reconfigure(boolean enabled, DiscoverySourceKind source, List<String> namespaces,
                                           FleetView fleet) {
        writer.revoked = true;
        writer = new WriterImpl();
        DynamoSnapshot before = current;
        boolean changed = before.enabled() != enabled || before.source() != source
                || !before.namespaces().equals(namespaces) || !before.fleet().equals(fleet);
        long nextGeneration = changed ? generation + 1 : generation;
        // A reconfigured registry is disconnected until the new watcher's watches are open.
        current = new DynamoSnapshot(enabled, source, namespaces, nextGeneration, false, fleet);
        if (changed) {
            mixedWarnings.forgetNamespacesOtherThan(namespaces);
            bump(nextGeneration, fleet);
        }
        return writer;
    }

    /** Must hold {@code this}. The snapshot is already swapped. */
    private void bump(long nextGeneration, FleetView fleet) {
        synchronized (generationMonitor) {
            generation = nextGeneration;
            generationMonitor.notifyAll();
        }
        mixedWarnings.check(fleet);
        for (CoalescingSubscription subscription : subscriptions) {
            subscription.signal();
        }
    }

    private final class WriterImpl implements Writer {
        // Guarded by the registry's monitor.
        boolean revoked;

        @Override
        public boolean publish(FleetView fleet) {
            synchronized (AtomicDynamoRegistry.this) {
                if (revoked) {
                    return false;
                }
                DynamoSnapshot before = current;
                if (before.fleet().equals(fleet)) {
                    return false;
                }
                long nextGeneration = generation + 1;
                current = before.withFleet(fleet, nextGeneration);
                bump(nextGeneration, fleet);
                return true;
            }
        }

        @Override
        public void setConnected(boolean connected) {
            synchronized (AtomicDynamoRegistry.this) {
                if (!revoked && current.connected() != connected) {
                    current = current.withConnected(connected);
                }
            }
        }

        @Override
        public boolean isCurrent() {
            synchronized (AtomicDynamoRegistry.this) {
                return !revoked;
            }
        }
    }

    private final class CoalescingSubscription implements Subscription {
        private final Executor executor;
        private final LongConsumer listener;
        private final AtomicBoolean queued = new AtomicBoolean();
        private volatile boolean closed;

        CoalescingSubscription(Executor executor, LongConsumer listener) {
            this.executor = executor;
            this.listener = listener;
        }

        void signal() {
            if (closed || !queued.compareAndSet(false, true)) {
                return;
            }
            try {
                executor.execute(this::deliver);
            } catch (RuntimeException e) {
                queued.set(false);
                LOG.warn("registry subscriber executor refused a notification", e);
            }
        }

        private void deliver() {
            // Cleared before reading, so a bump that lands during the callback schedules another run.
            queued.set(false);
            if (closed) {
                return;
            }
            try {
                listener.accept(generation);
            } catch (RuntimeException e) {
                LOG.warn("registry subscriber failed", e);
            }
        }

        @Override
        public void close() {
            closed = true;
            subscriptions.remove(this);
        }
    }
}
