package dev.continuum.router.discovery.kubernetes;

import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.config.KubernetesConfig;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.discovery.source.WatchSource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code source: kubernetes}: DynamoWorkerMetadata resources ({@code nvidia.com/v1alpha1}) joined with the
 * readiness of operator-labelled EndpointSlices, both in one Kubernetes namespace, fed to the etcd reducer
 * through {@link MetadataFleet}. The same records an etcd fleet registers, so cards, capacities and publishers
 * are all there.
 *
 * <p>Two watches, each with its own idle deadline. A session of at least
 * {@code min(watch_reconnect_backoff.max, 290 s)} that ends relists both inside the pass after the backoff's
 * floor (connected stays 1); a shorter one, a 410 Gone, an ERROR event or an idle deadline ends the pass, and
 * the watcher relists both after the growing backoff.
 */
public final class KubernetesMetadataSource implements WatchSource {
    static final String API_VERSION = "nvidia.com/v1alpha1";
    static final String KIND = "DynamoWorkerMetadata";
    static final String SLICE_SELECTOR = PodClassifier.BACKEND_LABEL + "=kubernetes," + PodClassifier.ENABLED_LABEL
            + "=true";
    /** Named in full, so the client needs no API discovery request (and the Role no discovery rights). */
    static final ResourceDefinitionContext CONTEXT = new ResourceDefinitionContext.Builder().withGroup("nvidia.com")
            .withVersion("v1alpha1").withKind(KIND).withPlural("dynamoworkermetadatas").withNamespaced(true).build();
    private static final Logger LOG = LoggerFactory.getLogger(KubernetesMetadataSource.class);
    private static final AtomicInteger THREAD_IDS = new AtomicInteger();

    private final KubernetesConfig config;
    private final KubernetesClients clients;
    private final DiscoveryCounters counters;
    private final KubernetesLimits timers;
    private final MetadataLimits limits;
    private final LongSupplier nanoTime;
    private final MetadataFleet.Memory memory = new MetadataFleet.Memory();

    public KubernetesMetadataSource(KubernetesConfig config, KubernetesClients clients, DiscoveryCounters counters,
                                    KubernetesLimits timers, MetadataLimits limits) {
        this(config, clients, counters, timers, limits, System::nanoTime);
    }

    KubernetesMetadataSource(KubernetesConfig config, KubernetesClients clients, DiscoveryCounters counters,
                             KubernetesLimits timers, MetadataLimits limits, LongSupplier nanoTime) {
        this.config = config;
        this.clients = clients;
        this.counters = counters;
        this.timers = timers;
        this.limits = limits;
        this.nanoTime = nanoTime;
    }

    @Override
    public String describe() {
        return "Kubernetes DynamoWorkerMetadata and EndpointSlices in namespace " + config.namespace()
                + " (Dynamo namespaces " + config.effectiveDynamoNamespaces() + ")";
    }

    @Override
    public Pass open(Duration seedTimeout) throws Exception {
        Duration budget = seedTimeout.compareTo(timers.requestTimeout()) < 0 ? seedTimeout : timers.requestTimeout();
        KubernetesClient client = clients.create(budget);
        try {
            Listed listed = listBoth(client, nanoTime.getAsLong() + budget.toNanos());
            return new MetadataPass(client, listed);
        } catch (Exception | Error e) {
            client.close();
            throw e;
        }
    }

    private record Listed(MetadataFleet fleet, String resourceVersion, String sliceVersion) {
    }

    private Listed listBoth(KubernetesClient client, long deadline) throws TimeoutException {
        MetadataFleet fleet = new MetadataFleet(config.effectiveDynamoNamespaces(), limits, counters, memory);
        // Slices first: resources listed after them are fed at once when ready (the order only saves work).
        String sliceVersion = list(options -> client.discovery().v1().endpointSlices().inNamespace(config.namespace())
                .list(options), SLICE_SELECTOR, limits.slicePageSize(), Integer.MAX_VALUE, deadline,
                slice -> fleet.putSlice(slice.getMetadata().getName(), readyTargets(slice)));
        String resourceVersion = list(options -> client.genericKubernetesResources(CONTEXT)
                .inNamespace(config.namespace()).list(options), null, limits.resourcePageSize(),
                Integer.MAX_VALUE, deadline, resource -> putResource(fleet, resource));
        return new Listed(fleet, resourceVersion, sliceVersion);
    }

    private <T extends HasMetadata, L extends KubernetesResourceList<T>> String list(Function<ListOptions, L> page,
            @Nullable String selector, int pageSize, int max, long deadline,
            Function<T, List<DiscoveryEvent>> apply) throws TimeoutException {
        String token = null;
        String resourceVersion;
        int seen = 0;
        do {
            if (nanoTime.getAsLong() - deadline > 0) {
                throw new TimeoutException("listing took longer than " + timers.requestTimeout().toSeconds() + " s");
            }
            L list = page.apply(new ListOptionsBuilder().withLabelSelector(selector).withLimit((long) pageSize)
                    .withContinue(token).build());
            for (T item : list.getItems()) {
                if (++seen > max) {
                    throw new IllegalStateException("more than " + max + " objects listed");
                }
                apply.apply(item);
            }
            resourceVersion = list.getMetadata().getResourceVersion();
            token = list.getMetadata().getContinue();
        } while (token != null && !token.isEmpty());
        if (resourceVersion == null || resourceVersion.isEmpty()) {
            throw new IllegalStateException("a list carried no resourceVersion to watch from");
        }
        return resourceVersion;
    }

    static Set<String> readyTargets(EndpointSlice slice) {
        Set<String> names = new HashSet<>();
        if (slice.getEndpoints() != null) {
            for (Endpoint endpoint : slice.getEndpoints()) {
                if (endpoint.getConditions() != null && Boolean.TRUE.equals(endpoint.getConditions().getReady())
                        && endpoint.getTargetRef() != null && endpoint.getTargetRef().getName() != null) {
                    names.add(endpoint.getTargetRef().getName());
                }
            }
        }
        return names;
    }

    static List<DiscoveryEvent> putResource(MetadataFleet fleet, GenericKubernetesResource resource) {
        String owner = null;
        List<OwnerReference> owners = resource.getMetadata().getOwnerReferences();
        if (owners != null) {
            for (OwnerReference ref : owners) {
                if ("Pod".equals(ref.getKind())) {
                    owner = ref.getName();
                    break;
                }
            }
        }
        return fleet.putResource(resource.getMetadata().getName(), resource.getMetadata().getUid(),
                resource.getAdditionalProperties().get("spec"), owner);
    }

    private final class MetadataPass implements Pass {
        private final KubernetesClient client;
        private final ScheduledExecutorService thread;
        private final List<DiscoveryEvent.Put> seed;
        private final AtomicBoolean closed = new AtomicBoolean();
        private MetadataFleet fleet;
        private String resourceVersion;
        private String sliceVersion;
        private @Nullable PassListener listener;
        private final List<Watch> watches = new ArrayList<>();
        private int session;
        private long sessionStartedAt;
        private final @Nullable ScheduledFuture<?>[] idle = new ScheduledFuture<?>[2];
        private volatile boolean ended;

        MetadataPass(KubernetesClient client, Listed listed) {
            this.client = client;
            this.fleet = listed.fleet();
            this.seed = fleet.records();
            this.resourceVersion = listed.resourceVersion();
            this.sliceVersion = listed.sliceVersion();
            this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "dynamo-kubernetes-metadata-" + THREAD_IDS.incrementAndGet());
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
                synchronized (watches) {
                    watches.add(client.discovery().v1().endpointSlices().inNamespace(config.namespace())
                            .watch(watchOptions(SLICE_SELECTOR, sliceVersion), new SessionWatcher<>(current, 0)));
                    watches.add(client.genericKubernetesResources(CONTEXT).inNamespace(config.namespace())
                            .watch(watchOptions(null, resourceVersion), new SessionWatcher<>(current, 1)));
                }
                if (closed.get()) {
                    closeWatches();
                    return false;
                }
                armIdle(current, 0);
                armIdle(current, 1);
                return true;
            } catch (RuntimeException e) {
                end("a watch could not be opened", e);
                return false;
            }
        }

        private ListOptions watchOptions(@Nullable String selector, String from) {
            return new ListOptionsBuilder().withLabelSelector(selector).withResourceVersion(from)
                    .withTimeoutSeconds(timers.watchTimeoutSeconds()).withAllowWatchBookmarks(false).build();
        }

        /** Independent deadlines: a stalled slice watch is noticed while the resource watch is busy. */
        private void armIdle(int current, int which) {
            ScheduledFuture<?> previous = idle[which];
            if (previous != null) {
                previous.cancel(false);
            }
            idle[which] = thread.schedule(() -> {
                if (current == session) {
                    end("no " + (which == 0 ? "EndpointSlice" : "DynamoWorkerMetadata") + " watch event for "
                            + timers.idleDeadline().toMillis() + " ms (idle deadline)", null);
                }
            }, timers.idleDeadline().toNanos(), TimeUnit.NANOSECONDS);
        }

        private void onEvent(int current, int which, Watcher.Action action, HasMetadata object) {
            if (ended || current != session || listener == null) {
                return;
            }
            armIdle(current, which);
            String name = object.getMetadata() == null ? null : object.getMetadata().getName();
            if (action == Watcher.Action.ERROR) {
                end("a watch sent an ERROR event", null);
                return;
            }
            if (name == null || action == Watcher.Action.BOOKMARK) {
                return;
            }
            boolean deleted = action == Watcher.Action.DELETED;
            List<DiscoveryEvent> events;
            if (which == 0) {
                events = deleted ? fleet.deleteSlice(name) : fleet.putSlice(name, readyTargets((EndpointSlice) object));
            } else {
                events = deleted ? fleet.deleteResource(name)
                        : putResource(fleet, (GenericKubernetesResource) object);
            }
            if (!events.isEmpty()) {
                listener.events(events);
            }
        }

        private void onClose(int current, @Nullable WatcherException cause) {
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
                end(gone ? "a watch's resourceVersion is gone (410)" : "a watch ended after " + lasted.toMillis()
                        + " ms", cause);
                return;
            }
            thread.schedule(this::relist, config.watchReconnectBackoff().initial().toNanos(), TimeUnit.NANOSECONDS);
        }

        private void relist() {
            if (ended || listener == null) {
                return;
            }
            Listed listed;
            try {
                listed = listBoth(client, nanoTime.getAsLong() + timers.requestTimeout().toNanos());
            } catch (Exception e) {
                end("relisting failed", e);
                return;
            }
            fleet = listed.fleet();
            resourceVersion = listed.resourceVersion();
            sliceVersion = listed.sliceVersion();
            listener.events(List.of(new DiscoveryEvent.Resync(fleet.records())));
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

        @Override
        public void close() {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            ended = true;
            thread.shutdownNow();
            closeWatches();
            client.close();
        }

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
                // Our own close.
            }

            @Override
            public void onClose(WatcherException cause) {
                execute(() -> MetadataPass.this.onClose(current, cause));
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
}
