package dev.continuum.router.discovery.kubernetes;

import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.config.KubernetesConfig;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.discovery.source.WatchSource;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code source: kubernetes_pods}: operator-labelled Pods in one Kubernetes namespace, listed in pages and then
 * watched from the list's resourceVersion. Each ready worker Pod becomes the records an etcd worker would
 * register (see {@link PodFleet}), so the etcd reducer and everything after it are shared.
 *
 * <p><b>Ends of a watch.</b> fabric8's automatic watch reconnect is off (it would resume from the last
 * resourceVersion; the seed wants a full relist). A watch session that lasted at least
 * {@code min(watch_reconnect_backoff.max, 290 s)} and then ended (the routine server-side close requested with
 * {@code timeoutSeconds=290}, or anything else after that long) is relisted inside the pass after the
 * backoff's floor, which is exactly where the shared backoff would be after such a session: the view is
 * replaced by one resync, and {@code connected} stays 1. A shorter session, a 410 Gone, an {@code ERROR}
 * event or 320 s without any event end the pass, and the watcher relists after the growing backoff.
 */
public final class KubernetesPodSource implements WatchSource {
    private static final Logger LOG = LoggerFactory.getLogger(KubernetesPodSource.class);
    private static final AtomicInteger THREAD_IDS = new AtomicInteger();

    private final KubernetesConfig config;
    private final KubernetesClients clients;
    private final DiscoveryCounters counters;
    private final KubernetesLimits limits;
    private final LongSupplier nanoTime;
    private final String selector;
    private final PodFleet.Memory memory = new PodFleet.Memory();

    public KubernetesPodSource(KubernetesConfig config, KubernetesClients clients, DiscoveryCounters counters,
                               KubernetesLimits limits) {
        this(config, clients, counters, limits, System::nanoTime);
    }

    KubernetesPodSource(KubernetesConfig config, KubernetesClients clients, DiscoveryCounters counters,
                        KubernetesLimits limits, LongSupplier nanoTime) {
        this.config = config;
        this.clients = clients;
        this.counters = counters;
        this.limits = limits;
        this.nanoTime = nanoTime;
        this.selector = PodClassifier.labelSelector(config);
    }

    @Override
    public String describe() {
        return "Kubernetes Pods in namespace " + config.namespace() + " (" + selector + ")";
    }

    @Override
    public Pass open(Duration seedTimeout) throws Exception {
        Duration budget = seedTimeout.compareTo(limits.requestTimeout()) < 0 ? seedTimeout : limits.requestTimeout();
        long deadline = nanoTime.getAsLong() + budget.toNanos();
        KubernetesClient client = clients.create(budget);
        try {
            PodFleet fleet = new PodFleet(limits.maxPods(), counters, memory);
            String resourceVersion = list(client, fleet, deadline);
            return new PodPass(client, fleet, resourceVersion);
        } catch (Exception | Error e) {
            client.close();
            throw e;
        }
    }

    /** Lists every matching Pod in pages into {@code fleet}; returns the list's resourceVersion. */
    private String list(KubernetesClient client, PodFleet fleet, long deadline) throws TimeoutException {
        String token = null;
        String resourceVersion = null;
        do {
            if (nanoTime.getAsLong() - deadline > 0) {
                throw new TimeoutException("listing Pods took longer than " + limits.requestTimeout().toSeconds()
                        + " s");
            }
            ListOptions options = new ListOptionsBuilder().withLabelSelector(selector)
                    .withLimit((long) limits.podPageSize()).withContinue(token).build();
            PodList page = client.pods().inNamespace(config.namespace()).list(options);
            for (Pod pod : page.getItems()) {
                fleet.update(pod.getMetadata().getName(), PodClassifier.classify(pod, config));
            }
            resourceVersion = page.getMetadata().getResourceVersion();
            token = page.getMetadata().getContinue();
        } while (token != null && !token.isEmpty());
        if (resourceVersion == null || resourceVersion.isEmpty()) {
            throw new IllegalStateException("the Pod list carried no resourceVersion to watch from");
        }
        return resourceVersion;
    }

    private final class PodPass implements Pass {
        private final KubernetesClient client;
        private final ScheduledExecutorService thread;
        /** Owned by {@link #thread} once following starts. */
        private PodFleet fleet;
        private final List<DiscoveryEvent.Put> seed;
        private @Nullable String resourceVersion;
        private @Nullable PassListener listener;
        private volatile @Nullable Watch watch;
        private int session;
        private long sessionStartedAt;
        private @Nullable ScheduledFuture<?> idle;
        private volatile boolean ended;
        private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();

        PodPass(KubernetesClient client, PodFleet fleet, String resourceVersion) {
            this.client = client;
            this.fleet = fleet;
            this.seed = fleet.records();
            this.resourceVersion = resourceVersion;
            this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "dynamo-kubernetes-pods-" + THREAD_IDS.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
        }

        @Override
        public List<DiscoveryEvent.Put> seed() {
            return seed;
        }

        @Override
        public void follow(PassListener listener) {
            this.listener = listener;
            try {
                thread.execute(() -> {
                    if (openWatch()) {
                        listener.opened();
                    }
                });
            } catch (java.util.concurrent.RejectedExecutionException e) {
                listener.ended("closed", null);
            }
        }

        /** Opens a watch session from {@link #resourceVersion}; on failure ends the pass. */
        private boolean openWatch() {
            int current = ++session;
            ListOptions options = new ListOptionsBuilder().withLabelSelector(selector)
                    .withResourceVersion(resourceVersion).withTimeoutSeconds(limits.watchTimeoutSeconds())
                    .withAllowWatchBookmarks(false).build();
            try {
                sessionStartedAt = nanoTime.getAsLong();
                watch = client.pods().inNamespace(config.namespace()).watch(options, new SessionWatcher(current));
                if (closed.get()) {
                    closeWatch();
                    return false;
                }
                armIdle(current);
                return true;
            } catch (RuntimeException e) {
                end("the Pod watch could not be opened", e);
                return false;
            }
        }

        private void armIdle(int current) {
            if (idle != null) {
                idle.cancel(false);
            }
            idle = thread.schedule(() -> {
                if (current == session) {
                    end("no Pod watch event for " + limits.idleDeadline().toMillis() + " ms (idle deadline)", null);
                }
            }, limits.idleDeadline().toNanos(), TimeUnit.NANOSECONDS);
        }

        private void onEvent(int current, Watcher.Action action, Pod pod) {
            if (ended || current != session || listener == null) {
                return;
            }
            armIdle(current);
            String name = pod.getMetadata() == null ? null : pod.getMetadata().getName();
            List<DiscoveryEvent> events = switch (action) {
                case ADDED, MODIFIED -> name == null ? List.of() : fleet.update(name, PodClassifier.classify(pod, config));
                case DELETED -> name == null ? List.of() : fleet.update(name, null);
                case BOOKMARK -> List.of();
                case ERROR -> {
                    end("the Pod watch sent an ERROR event", null);
                    yield List.of();
                }
            };
            if (!events.isEmpty()) {
                listener.events(events);
            }
        }

        private void onClose(int current, @Nullable WatcherException cause) {
            if (ended || current != session) {
                return;
            }
            session++;
            Duration lasted = Duration.ofNanos(nanoTime.getAsLong() - sessionStartedAt);
            Duration routine = config.watchReconnectBackoff().max().compareTo(limits.watchTimeout()) < 0
                    ? config.watchReconnectBackoff().max() : limits.watchTimeout();
            boolean gone = cause != null && cause.isHttpGone();
            if (gone || lasted.compareTo(routine) < 0) {
                end(gone ? "the Pod watch's resourceVersion is gone (410)" : "the Pod watch ended after "
                        + lasted.toMillis() + " ms", cause);
                return;
            }
            Duration delay = config.watchReconnectBackoff().initial();
            LOG.debug("Pod watch closed after {} ms; relisting in {} ms", lasted.toMillis(), delay.toMillis());
            thread.schedule(this::relist, delay.toNanos(), TimeUnit.NANOSECONDS);
        }

        private void relist() {
            if (ended || listener == null) {
                return;
            }
            PodFleet fresh = new PodFleet(limits.maxPods(), counters, memory);
            try {
                resourceVersion = list(client, fresh, nanoTime.getAsLong() + limits.requestTimeout().toNanos());
            } catch (Exception e) {
                end("relisting Pods failed", e);
                return;
            }
            fleet = fresh;
            listener.events(List.of(new DiscoveryEvent.Resync(fresh.records())));
            openWatch();
        }

        private void end(String reason, @Nullable Throwable cause) {
            if (ended) {
                return;
            }
            ended = true;
            session++;
            closeWatch();
            if (listener != null) {
                listener.ended(reason, cause);
            }
        }

        private synchronized void closeWatch() {
            Watch w = watch;
            watch = null;
            if (w != null) {
                try {
                    w.close();
                } catch (RuntimeException e) {
                    LOG.debug("closing the Pod watch failed", e);
                }
            }
        }

        /**
         * Idempotent, callable from any thread (the watcher closes the pass when it ends, and the supervisor
         * when it stops the watcher). Does not wait for the pass's thread: a task still running there sees the
         * ended flag, and fabric8 drops callbacks of a closed watch.
         */
        @Override
        public void close() {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            ended = true;
            thread.shutdownNow();
            closeWatch();
            client.close();
        }

        /** Hands fabric8's callbacks to the pass's thread, tagged with the session they belong to. */
        private final class SessionWatcher implements Watcher<Pod> {
            private final int current;

            SessionWatcher(int current) {
                this.current = current;
            }

            @Override
            public void eventReceived(Action action, Pod pod) {
                execute(() -> onEvent(current, action, pod));
            }

            @Override
            public void onClose() {
                // Our own close: nothing to report.
            }

            @Override
            public void onClose(WatcherException cause) {
                execute(() -> PodPass.this.onClose(current, cause));
            }

            private void execute(Runnable task) {
                try {
                    thread.execute(task);
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    // The pass is closed.
                }
            }
        }
    }
}
