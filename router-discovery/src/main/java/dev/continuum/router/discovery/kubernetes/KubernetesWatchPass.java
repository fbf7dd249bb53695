package dev.continuum.router.discovery.kubernetes;

import dev.continuum.router.discovery.config.KubernetesConfig;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.discovery.source.WatchSource.Pass;
import dev.continuum.router.discovery.source.WatchSource.PassListener;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One list-then-watch pass of a Kubernetes source, shared by the Pod and the metadata sources: the pass's own
 * thread, watch sessions opened from the list's resourceVersions, an independent idle deadline per watch, and
 * the rules for an end of a watch.
 *
 * <p><b>Ends of a watch.</b> fabric8's automatic reconnect is off (it would resume from the last
 * resourceVersion; a full relist cannot miss a change). A session that lasted at least
 * {@code min(watch_reconnect_backoff.max, 290 s)} and then ended (the routine server-side close requested with
 * {@code timeoutSeconds=290}, or anything else after that long) is relisted inside the pass after the backoff's
 * floor, exactly where the shared backoff would be after such a session: the view is replaced by one resync and
 * {@code connected} stays 1. A shorter session, a 410 Gone, an {@code ERROR} event or an idle deadline ends the
 * pass, and the watcher relists after the growing backoff.
 *
 * <p>Every callback runs on the pass's single thread, so subclasses keep their fleet without locks.
 */
abstract class KubernetesWatchPass implements Pass {
    private static final Logger LOG = LoggerFactory.getLogger(KubernetesWatchPass.class);

    protected final KubernetesClient client;
    protected final KubernetesConfig config;
    protected final KubernetesLimits timers;
    protected final LongSupplier nanoTime;
    private final ScheduledExecutorService thread;
    private final List<DiscoveryEvent.Put> seed;
    private final String[] watchNames;
    private final @Nullable ScheduledFuture<?>[] idle;
    private final List<Watch> watches = new ArrayList<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private @Nullable PassListener listener;
    private int session;
    private long sessionStartedAt;
    private volatile boolean ended;

    /**
     * @param watchNames one name per watch, used in log lines and as the watch's index ({@code which})
     */
    KubernetesWatchPass(KubernetesClient client, KubernetesConfig config, KubernetesLimits timers,
                        LongSupplier nanoTime, List<DiscoveryEvent.Put> seed, String threadName,
                        String... watchNames) {
        this.client = client;
        this.config = config;
        this.timers = timers;
        this.nanoTime = nanoTime;
        this.seed = seed;
        this.watchNames = watchNames.clone();
        this.idle = new ScheduledFuture<?>[watchNames.length];
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Opens watch {@code which} from the last list's resourceVersion, reporting to {@code watcher(session,
     * which)}.
     */
    protected abstract Watch openWatch(int which, int session);

    /** The watcher a session's watch reports to; its callbacks run on the pass's thread. */
    protected final <T extends HasMetadata> Watcher<T> watcher(int session, int which) {
        return new SessionWatcher<>(session, which);
    }

    /** Folds one ADDED, MODIFIED or DELETED object of watch {@code which} into the fleet. */
    protected abstract List<DiscoveryEvent> apply(int which, Watcher.Action action, HasMetadata object, String name);

    /** Lists everything again into a fresh fleet (within the request timeout) and returns its records. */
    protected abstract List<DiscoveryEvent.Put> relistRecords() throws Exception;

    /** Every record the pass's current fleet stands for; runs on the pass's thread. */
    protected abstract List<DiscoveryEvent.Put> currentRecords();

    /** Answered on the pass's thread, which owns the fleet, within the request timeout. */
    @Override
    public final List<DiscoveryEvent> reread(List<String> keys) throws Exception {
        Future<List<DiscoveryEvent>> answer = thread.submit(() -> {
            Map<String, byte[]> records = new HashMap<>();
            for (DiscoveryEvent.Put put : currentRecords()) {
                records.put(put.key(), put.value());
            }
            List<DiscoveryEvent> current = new ArrayList<>(keys.size());
            for (String key : keys) {
                byte[] value = records.get(key);
                current.add(value == null ? new DiscoveryEvent.Delete(key) : new DiscoveryEvent.Put(key, value));
            }
            return current;
        });
        try {
            return answer.get(timers.requestTimeout().toNanos(), TimeUnit.NANOSECONDS);
        } finally {
            answer.cancel(true);
        }
    }

    /** Watch options with the routine server-side close and no bookmarks. */
    protected final ListOptions watchOptions(@Nullable String selector, String resourceVersion) {
        return new ListOptionsBuilder().withLabelSelector(selector).withResourceVersion(resourceVersion)
                .withTimeoutSeconds(timers.watchTimeoutSeconds()).withAllowWatchBookmarks(false).build();
    }

    @Override
    public final List<DiscoveryEvent.Put> seed() {
        return seed;
    }

    @Override
    public final void follow(PassListener listener) {
        this.listener = listener;
        try {
            thread.execute(() -> {
                if (openWatches()) {
                    listener.opened();
                }
            });
        } catch (RejectedExecutionException e) {
            listener.ended("closed", null);
        }
    }

    private boolean openWatches() {
        int current = ++session;
        sessionStartedAt = nanoTime.getAsLong();
        try {
            for (int which = 0; which < watchNames.length; which++) {
                Watch watch = openWatch(which, current);
                synchronized (watches) {
                    watches.add(watch);
                }
            }
            if (closed.get()) {
                closeWatches();
                return false;
            }
            for (int which = 0; which < watchNames.length; which++) {
                armIdle(current, which);
            }
            return true;
        } catch (RuntimeException e) {
            end("a watch could not be opened", e);
            return false;
        }
    }

    /** Independent deadlines: a stalled watch is noticed while another one is busy. */
    private void armIdle(int current, int which) {
        ScheduledFuture<?> previous = idle[which];
        if (previous != null) {
            previous.cancel(false);
        }
        idle[which] = thread.schedule(() -> {
            if (current == session) {
                end("no " + watchNames[which] + " watch event for " + timers.idleDeadline().toMillis()
                        + " ms (idle deadline)", null);
            }
        }, timers.idleDeadline().toNanos(), TimeUnit.NANOSECONDS);
    }

    private void onEvent(int current, int which, Watcher.Action action, HasMetadata object) {
        if (ended || current != session || listener == null) {
            return;
        }
        armIdle(current, which);
        if (action == Watcher.Action.ERROR) {
            end("the " + watchNames[which] + " watch sent an ERROR event", null);
            return;
        }
        String name = object.getMetadata() == null ? null : object.getMetadata().getName();
        if (name == null || action == Watcher.Action.BOOKMARK) {
            return;
        }
        List<DiscoveryEvent> events = apply(which, action, object, name);
        if (!events.isEmpty()) {
            listener.events(events);
        }
    }

    private void onClose(int current, int which, @Nullable WatcherException cause) {
        if (ended || current != session) {
            return;
        }
        session++;
        closeWatches();
        Duration lasted = Duration.ofNanos(nanoTime.getAsLong() - sessionStartedAt);
        Duration routine = config.watchReconnectBackoff().max().compareTo(timers.watchTimeout()) < 0
                ? config.watchReconnectBackoff().max() : timers.watchTimeout();
        boolean gone = cause != null && cause.isHttpGone();
        if (gone || lasted.compareTo(routine) < 0) {
            end(gone ? "the " + watchNames[which] + " watch's resourceVersion is gone (410)"
                    : "the " + watchNames[which] + " watch ended after " + lasted.toMillis() + " ms", cause);
            return;
        }
        Duration delay = config.watchReconnectBackoff().initial();
        LOG.debug("{} watch closed after {} ms; relisting in {} ms", watchNames[which], lasted.toMillis(),
                delay.toMillis());
        thread.schedule(this::relist, delay.toNanos(), TimeUnit.NANOSECONDS);
    }

    private void relist() {
        if (ended || listener == null) {
            return;
        }
        List<DiscoveryEvent.Put> records;
        try {
            records = relistRecords();
        } catch (Exception e) {
            end("relisting failed", e);
            return;
        }
        listener.events(List.of(new DiscoveryEvent.Resync(records)));
        openWatches();
    }

    private void end(String reason, @Nullable Throwable cause) {
        if (ended) {
            return;
        }
        ended = true;
        session++;
        closeWatches();
        if (listener != null) {
            listener.ended(reason, cause);
        }
    }

    private void closeWatches() {
        List<Watch> open;
        synchronized (watches) {
            open = new ArrayList<>(watches);
            watches.clear();
        }
        for (Watch w : open) {
            try {
                w.close();
            } catch (RuntimeException e) {
                LOG.debug("closing a watch failed", e);
            }
        }
    }

    /**
     * Idempotent, callable from any thread (the watcher closes the pass when it ends, and the supervisor when it
     * stops the watcher). Does not wait for the pass's thread: a task still running there sees the ended flag,
     * and fabric8 drops callbacks of a closed watch.
     */
    @Override
    public final void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        ended = true;
        thread.shutdownNow();
        closeWatches();
        client.close();
    }

    /** Hands fabric8's callbacks to the pass's thread, tagged with the session and watch they belong to. */
    private final class SessionWatcher<T extends HasMetadata> implements Watcher<T> {
        private final int current;
        private final int which;

        SessionWatcher(int current, int which) {
            this.current = current;
            this.which = which;
        }

        @Override
        public void eventReceived(Action action, T object) {
            execute(() -> onEvent(current, which, action, object));
        }

        @Override
        public void onClose() {
            // Our own close: nothing to report.
        }

        @Override
        public void onClose(WatcherException cause) {
            execute(() -> KubernetesWatchPass.this.onClose(current, which, cause));
        }

        private void execute(Runnable task) {
            try {
                thread.execute(task);
            } catch (RejectedExecutionException e) {
                // The pass is closed.
            }
        }
    }
}
