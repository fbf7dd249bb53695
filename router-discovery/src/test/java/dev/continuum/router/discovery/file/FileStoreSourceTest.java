package dev.continuum.router.discovery.file;

import static dev.continuum.router.testing.DynamoRecords.card;
import static dev.continuum.router.testing.DynamoRecords.cardKey;
import static dev.continuum.router.testing.DynamoRecords.channel;
import static dev.continuum.router.testing.DynamoRecords.channelKey;
import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static dev.continuum.router.testing.DynamoRecords.model;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.config.FileStoreConfig;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.discovery.watch.DiscoverySupervisor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class FileStoreSourceTest {
    @TempDir
    Path root;
    private DiscoverySupervisor supervisor;

    private DynamoRegistry start(List<String> namespaces, Duration rescan) {
        FileStoreConfig config = new FileStoreConfig(root, namespaces.get(0), namespaces.size() > 1 ? namespaces : List.of(),
                FileStoreConfig.DEFAULT_TTL, rescan);
        supervisor = DiscoverySupervisor.builder().build();
        supervisor.start(true, DiscoveryConfig.file(config));
        return supervisor.registry();
    }

    @AfterEach
    void stop() {
        if (supervisor != null) {
            supervisor.stop().join();
        }
    }

    private static List<Long> ids(DynamoRegistry registry) {
        return registry.snapshot().workers().stream().map(DynamoWorker::instanceId).toList();
    }

    @Test
    void theSeedReadsLiveFilesByTheirDecodedNames() throws Exception {
        DynamoFileStore store = new DynamoFileStore(root);
        store.write(endpointKey("dynamo", "decode", "generate", 0x694d967dae38401bL),
                endpoint("dynamo", "decode", "generate", 0x694d967dae38401bL));
        store.write(cardKey("dynamo", "decode", "generate", 0x694d967dae38401bL),
                model("dynamo", "decode", "generate", 0x694d967dae38401bL, card("Qwen/Qwen3-0.6B", "Decode")));
        // A write in progress, a dead worker's file, and another namespace are not part of the fleet.
        store.writeTemporaryOnly(endpointKey("dynamo", "decode", "generate", 2), endpoint("dynamo", "decode", "generate", 2));
        store.write(endpointKey("dynamo", "decode", "generate", 3), endpoint("dynamo", "decode", "generate", 3));
        store.age(endpointKey("dynamo", "decode", "generate", 3), Duration.ofSeconds(11));
        store.write(endpointKey("other", "decode", "generate", 4), endpoint("other", "decode", "generate", 4));

        assertThat(store.fileOf(endpointKey("dynamo", "decode", "generate", 0x694d967dae38401bL)).getFileName())
                .hasToString("dynamo%2Fdecode%2Fgenerate%2F694d967dae38401b");

        FileStoreSource source = new FileStoreSource(new FileStoreConfig(root, "dynamo", List.of(),
                FileStoreConfig.DEFAULT_TTL, FileStoreConfig.DEFAULT_RESCAN_INTERVAL));
        try (var pass = source.open(Duration.ofSeconds(5))) {
            assertThat(pass.seed()).extracting(DiscoveryEvent.Put::key).containsExactlyInAnyOrder(
                    "v1/instances/dynamo/decode/generate/694d967dae38401b",
                    "v1/mdc/dynamo/decode/generate/694d967dae38401b");
        }
    }

    @Test
    void aRegistrationAppearsFromTheDirectoryWatchWithoutWaitingForARescan() throws Exception {
        // The bucket directory exists when the router starts (a worker ran before); rescans are minutes apart.
        Files.createDirectories(root.resolve("v1/instances"));
        DynamoRegistry registry = start(List.of("dynamo"), Duration.ofMinutes(5));
        await().until(() -> registry.snapshot().connected());
        new DynamoFileStore(root).write(endpointKey("dynamo", "decode", "generate", 7),
                endpoint("dynamo", "decode", "generate", 7));
        await().atMost(Duration.ofSeconds(5)).until(() -> ids(registry).equals(List.of(7L)));
    }

    @Test
    void aWorkerThatStopsTouchingItsFilesExpiresWithoutAnyFileEvent() throws Exception {
        DynamoFileStore store = new DynamoFileStore(root);
        String key = endpointKey("dynamo", "decode", "generate", 7);
        store.write(key, endpoint("dynamo", "decode", "generate", 7));
        store.write(endpointKey("dynamo", "decode", "generate", 8), endpoint("dynamo", "decode", "generate", 8));
        DynamoRegistry registry = start(List.of("dynamo"), Duration.ofMillis(100));
        await().until(() -> ids(registry).equals(List.of(7L, 8L)));

        // Last touched 9.7 s ago with a 10 s TTL: it dies in about 0.3 s, and no event will say so.
        store.age(key, Duration.ofMillis(9_700));
        store.touch(endpointKey("dynamo", "decode", "generate", 8));
        await().atMost(Duration.ofSeconds(5)).until(() -> ids(registry).equals(List.of(8L)));
    }

    @Test
    void keepAliveTouchesChangeNothingWhileRewritesAndRemovalsDo() throws Exception {
        DynamoFileStore store = new DynamoFileStore(root);
        String key = endpointKey("dynamo", "decode", "generate", 7);
        store.write(key, endpoint("dynamo", "decode", "generate", 7));
        DynamoRegistry registry = start(List.of("dynamo"), Duration.ofMillis(50));
        await().until(() -> ids(registry).equals(List.of(7L)));
        long generation = registry.generation();

        for (int i = 0; i < 5; i++) {
            store.touch(key);
            registry.awaitGeneration(generation, Duration.ofMillis(60));
        }
        assertThat(registry.generation()).isEqualTo(generation);

        store.write(cardKey("dynamo", "decode", "generate", 7), model("dynamo", "decode", "generate", 7,
                card("Qwen/Qwen3-0.6B", "Decode")));
        await().until(() -> "Qwen/Qwen3-0.6B".equals(registry.snapshot().worker("dynamo", 7).orElseThrow().model()));
        store.write(cardKey("dynamo", "decode", "generate", 7), model("dynamo", "decode", "generate", 7,
                card("Qwen/Qwen3-8B", "Decode")));
        await().until(() -> "Qwen/Qwen3-8B".equals(registry.snapshot().worker("dynamo", 7).orElseThrow().model()));

        store.remove(key);
        await().until(() -> registry.snapshot().workers().isEmpty());
    }

    @Test
    void eventChannelNamesAreDecodedOnceLeavingTheChannelKeysOwnEncoding() throws Exception {
        DynamoFileStore store = new DynamoFileStore(root);
        String key = channelKey("ns.one", "decode", "generate", "kv_metrics", 0xabc);
        assertThat(key).contains("ns%2Eone");
        Path file = store.write(key, channel("ns.one", "decode", "generate", "kv_metrics", 0xabc, "tcp://127.0.0.1:5557"));
        assertThat(file.getFileName().toString()).startsWith("namespace%2Fns%252Eone%2F");
        store.write(endpointKey("ns.one", "decode", "generate", 1), endpoint("ns.one", "decode", "generate", 1));

        DynamoRegistry registry = start(List.of("ns.one"), Duration.ofMillis(100));
        await().until(() -> registry.snapshot().publishers().size() == 1 && ids(registry).equals(List.of(1L)));
        assertThat(registry.snapshot().publishers().get(0).id().publisherId()).isEqualTo(0xabc);
    }

    @Test
    void aStoreThatDoesNotExistYetIsEmptyUntilDynamoCreatesIt() throws Exception {
        Path missing = root.resolve("not-yet");
        supervisor = DiscoverySupervisor.builder().build();
        supervisor.start(true, DiscoveryConfig.file(new FileStoreConfig(missing, "dynamo", List.of(),
                FileStoreConfig.DEFAULT_TTL, Duration.ofMillis(50))));
        DynamoRegistry registry = supervisor.registry();
        await().until(() -> registry.snapshot().connected());
        assertThat(Files.exists(missing)).as("the router creates nothing").isFalse();

        new DynamoFileStore(missing).write(endpointKey("dynamo", "decode", "generate", 5),
                endpoint("dynamo", "decode", "generate", 5));
        await().atMost(Duration.ofSeconds(5)).until(() -> ids(registry).equals(List.of(5L)));
    }

    @Test
    void theDefaultRootIsDynFileKvElseTheTempDirectory() {
        assertThat(FileStoreConfig.defaultRoot(java.util.Map.of("DYN_FILE_KV", "/srv/kv"))).isEqualTo(Path.of("/srv/kv"));
        assertThat(FileStoreConfig.defaultRoot(java.util.Map.of()))
                .isEqualTo(Path.of(System.getProperty("java.io.tmpdir"), "dynamo_store_kv"));
    }
}
