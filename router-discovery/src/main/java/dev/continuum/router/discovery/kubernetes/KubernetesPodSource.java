package dev.continuum.router.discovery.kubernetes;

import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.config.KubernetesConfig;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.discovery.source.WatchSource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * {@code source: kubernetes_pods}: operator-labelled Pods in one Kubernetes namespace, listed in pages and then
 * watched from the list's resourceVersion. Each ready worker Pod becomes the records an etcd worker would
 * register (see {@link PodFleet}), so the etcd reducer and everything after it are shared.
 *
 * <p>Watch sessions, idle deadlines and the rules for an end of a watch are {@link KubernetesWatchPass}'s.
 */
public final class KubernetesPodSource implements WatchSource {
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

    /** Pods in one watch; the fleet is owned by the pass's thread once following starts. */
    private final class PodPass extends KubernetesWatchPass {
        private PodFleet fleet;
        private String resourceVersion;

        PodPass(KubernetesClient client, PodFleet fleet, String resourceVersion) {
            super(client, KubernetesPodSource.this.config, limits, KubernetesPodSource.this.nanoTime, fleet.records(),
                    "dynamo-kubernetes-pods-" + THREAD_IDS.incrementAndGet(), "Pod");
            this.fleet = fleet;
            this.resourceVersion = resourceVersion;
        }

        @Override
        protected Watch openWatch(int which, int session) {
            return client.pods().inNamespace(config.namespace())
                    .watch(watchOptions(selector, resourceVersion), watcher(session, which));
        }

        @Override
        protected List<DiscoveryEvent> apply(int which, Watcher.Action action, HasMetadata object, String name) {
            return fleet.update(name, action == Watcher.Action.DELETED ? null
                    : PodClassifier.classify((Pod) object, config));
        }

        @Override
        protected List<DiscoveryEvent.Put> currentRecords() {
            return fleet.records();
        }

        @Override
        protected List<DiscoveryEvent.Put> relistRecords() throws Exception {
            PodFleet fresh = new PodFleet(limits.maxPods(), counters, memory);
            resourceVersion = list(client, fresh, nanoTime.getAsLong() + limits.requestTimeout().toNanos());
            fleet = fresh;
            return fresh.records();
        }
    }
}
