package dev.continuum.router.discovery.kubernetes;

import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.config.KubernetesConfig;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.discovery.source.WatchSource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

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
            Consumer<T> apply) throws TimeoutException {
        // A listing fills a fresh fleet that is handed over whole, so the events each put returns are not needed.
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
                apply.accept(item);
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

    /** Watch 0: EndpointSlices; watch 1: DynamoWorkerMetadata. The fleet is owned by the pass's thread. */
    private final class MetadataPass extends KubernetesWatchPass {
        private MetadataFleet fleet;
        private String resourceVersion;
        private String sliceVersion;

        MetadataPass(KubernetesClient client, Listed listed) {
            super(client, KubernetesMetadataSource.this.config, KubernetesMetadataSource.this.timers,
                    KubernetesMetadataSource.this.nanoTime, listed.fleet().records(),
                    "dynamo-kubernetes-metadata-" + THREAD_IDS.incrementAndGet(), "EndpointSlice", KIND);
            adopt(listed);
        }

        private void adopt(Listed listed) {
            this.fleet = listed.fleet();
            this.resourceVersion = listed.resourceVersion();
            this.sliceVersion = listed.sliceVersion();
        }

        @Override
        protected Watch openWatch(int which, int session) {
            return which == 0
                    ? client.discovery().v1().endpointSlices().inNamespace(config.namespace())
                            .watch(watchOptions(SLICE_SELECTOR, sliceVersion), watcher(session, which))
                    : client.genericKubernetesResources(CONTEXT).inNamespace(config.namespace())
                            .watch(watchOptions(null, resourceVersion), watcher(session, which));
        }

        @Override
        protected List<DiscoveryEvent> apply(int which, Watcher.Action action, HasMetadata object, String name) {
            boolean deleted = action == Watcher.Action.DELETED;
            if (which == 0) {
                return deleted ? fleet.deleteSlice(name) : fleet.putSlice(name, readyTargets((EndpointSlice) object));
            }
            return deleted ? fleet.deleteResource(name) : putResource(fleet, (GenericKubernetesResource) object);
        }

        @Override
        protected List<DiscoveryEvent.Put> currentRecords() {
            return fleet.records();
        }

        @Override
        protected List<DiscoveryEvent.Put> relistRecords() throws Exception {
            adopt(listBoth(client, nanoTime.getAsLong() + timers.requestTimeout().toNanos()));
            return fleet.records();
        }
    }
}
