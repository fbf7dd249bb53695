package dev.continuum.router.bench;

import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.config.BackoffConfig;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.config.KubernetesConfig;
import dev.continuum.router.discovery.kubernetes.KubernetesClients;
import dev.continuum.router.discovery.kubernetes.KubernetesLimits;
import dev.continuum.router.discovery.kubernetes.KubernetesMetadataSource;
import dev.continuum.router.discovery.kubernetes.KubernetesPodSource;
import dev.continuum.router.discovery.kubernetes.MetadataLimits;
import dev.continuum.router.discovery.watch.DiscoverySupervisor;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;

/**
 * Measured runs for docs/benchmarks.md (a program of the benchmarks jar, not JMH): time and heap to list,
 * classify and publish 16,384 (or {@code -Dbench.objects}) Pods ({@code pods}) and as many DynamoWorkerMetadata
 * resources with one ready EndpointSlice per 100 Pods ({@code metadata}) from fabric8's CRUD mock server, from
 * supervisor start to the first complete snapshot.
 */
public final class KubernetesBenchmark {
    /** Pods or metadata resources to create: 16,384 for the recorded runs, {@code -Dbench.objects} for a short one. */
    static final int OBJECTS = Math.max(1, Math.min(Integer.getInteger("bench.objects", 16_384), 1 << 20));
    /** Held so the level sticks: the mock server logs every request at INFO through java.util.logging. */
    private static final java.util.logging.Logger MOCK_SERVER_LOG = java.util.logging.Logger.getLogger("io.fabric8");

    private KubernetesBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        List<String> which = args.length == 0 ? List.of("pods", "metadata") : List.of(args);
        MOCK_SERVER_LOG.setLevel(java.util.logging.Level.WARNING);
        System.out.printf(Locale.ROOT, "java %s, %d cpus, max heap %d MiB%n", System.getProperty("java.version"),
                Runtime.getRuntime().availableProcessors(), Runtime.getRuntime().maxMemory() >> 20);
        if (which.contains("pods")) {
            run("pods", DiscoverySourceKind.KUBERNETES_PODS, admin -> {
                parallel(i -> admin.pods().inNamespace(KubernetesObjects.NS).resource(KubernetesObjects.decodeWorker(
                        "vllm-decode-" + i, "VllmDecodeWorker")).create());
            });
        }
        if (which.contains("metadata")) {
            run("metadata", DiscoverySourceKind.KUBERNETES, admin -> {
                parallel(i -> admin.genericKubernetesResources(KubernetesObjects.METADATA)
                        .inNamespace(KubernetesObjects.NS).resource(KubernetesObjects.metadata("vllm-decode-" + i))
                        .create());
                for (int s = 0; s < OBJECTS / 100 + 1; s++) {
                    Map<String, Boolean> ready = new LinkedHashMap<>();
                    for (int i = s * 100; i < Math.min(OBJECTS, (s + 1) * 100); i++) {
                        ready.put("vllm-decode-" + i, true);
                    }
                    admin.discovery().v1().endpointSlices().inNamespace(KubernetesObjects.NS)
                            .resource(KubernetesObjects.slice("slice-" + s, ready)).create();
                }
            });
        }
        System.exit(0);
    }

    private static void parallel(java.util.function.IntConsumer create) {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<?>> futures = new java.util.ArrayList<>();
        for (int i = 0; i < OBJECTS; i++) {
            int n = i;
            futures.add(pool.submit(() -> create.accept(n)));
        }
        try {
            for (Future<?> f : futures) {
                f.get();
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        pool.shutdown();
    }

    private static void run(String name, DiscoverySourceKind kind, Consumer<KubernetesClient> populate)
            throws Exception {
        KubernetesMockServer server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                new KubernetesCrudDispatcher(), false);
        server.init();
        server.expectCustomResource(new io.fabric8.kubernetes.client.dsl.base.CustomResourceDefinitionContext.Builder()
                .withGroup("nvidia.com").withVersion("v1alpha1").withKind(KubernetesObjects.KIND)
                .withPlural("dynamoworkermetadatas").withScope("Namespaced").build());
        try (KubernetesClient admin = server.createClient()) {
            long t0 = System.nanoTime();
            populate.accept(admin);
            System.out.printf(Locale.ROOT, "%s: populated the mock server in %.1f s%n", name,
                    (System.nanoTime() - t0) / 1e9);
            KubernetesConfig config = new KubernetesConfig(KubernetesObjects.NS, kind == DiscoverySourceKind.KUBERNETES
                    ? KubernetesObjects.METADATA_DYNAMO_NS : KubernetesObjects.POD_DYNAMO_NS, List.of(), kind == DiscoverySourceKind.KUBERNETES ? null : "m", List.of(),
                    BackoffConfig.defaults());
            KubernetesClients clients = timeout -> KubernetesClients.build(admin.getConfiguration(), timeout);
            for (int round = 1; round <= 3; round++) {
                System.gc();
                long heapBefore = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
                DiscoverySupervisor supervisor = DiscoverySupervisor.builder().seedTimeout(Duration.ofSeconds(120))
                        .sourceFactory((c, counters) -> kind == DiscoverySourceKind.KUBERNETES
                                ? new KubernetesMetadataSource(c.kubernetes(), clients, DiscoveryCounters.NONE,
                                        KubernetesLimits.defaults(), MetadataLimits.defaults())
                                : new KubernetesPodSource(c.kubernetes(), clients, DiscoveryCounters.NONE,
                                        KubernetesLimits.defaults()))
                        .build();
                long start = System.nanoTime();
                supervisor.start(true, DiscoveryConfig.kubernetes(kind, config));
                DynamoRegistry registry = supervisor.registry();
                long seen = 0;
                long deadline = System.nanoTime() + Duration.ofSeconds(300).toNanos();
                while (registry.snapshot().workers().size() < OBJECTS) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new IllegalStateException(name + ": " + registry.snapshot().workers().size() + " of "
                                + OBJECTS + " workers after 300 s");
                    }
                    seen = registry.awaitGeneration(seen, Duration.ofNanos(left)); // wakes on each new snapshot
                }
                long published = System.nanoTime();
                System.gc();
                long heapAfter = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
                System.out.printf(Locale.ROOT, "%s round %d: first complete snapshot of %d workers after %d ms; "
                        + "heap retained with the source running %.1f MiB%n", name, round,
                        registry.snapshot().workers().size(), (published - start) / 1_000_000,
                        (heapAfter - heapBefore) / 1048576.0);
                supervisor.stop().join();
            }
        } finally {
            destroy(server);
        }
    }

    /**
     * Stops the mock server. Its HTTP server and Vert.x instance close asynchronously within a fixed wait; on a
     * loaded machine that wait can run out after the run has finished. The close still completes in the
     * background, so only that timeout is reported rather than thrown.
     */
    private static void destroy(KubernetesMockServer server) {
        try {
            server.destroy();
        } catch (IllegalStateException e) {
            String m = String.valueOf(e.getMessage());
            if (!m.contains("Unable to close Vertx") && !m.contains("Unable to close MockWebServer")) {
                throw e;
            }
            System.out.println("the mock server's close timed out (" + m + "); it goes on in the background");
        }
    }
}
