package dev.continuum.router.discovery.file;

import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.config.FileStoreConfig;
import dev.continuum.router.discovery.watch.DiscoverySupervisor;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The supervisor builder's clock reaches the production file source it builds (its TTL filter). */
@Timeout(60)
class FileStoreSettingsTest {
    @TempDir
    Path root;
    private DiscoverySupervisor supervisor;

    @AfterEach
    void stop() {
        if (supervisor != null) {
            supervisor.stop().join();
        }
    }

    @Test
    void theBuildersClockDecidesWhichFilesHaveExpired() throws Exception {
        DynamoFileStore store = new DynamoFileStore(root);
        String key = endpointKey("dynamo", "decode", "generate", 7);
        store.write(key, endpoint("dynamo", "decode", "generate", 7));
        // Touched an hour ago on the system clock: expired by it, live on a clock an hour behind.
        store.age(key, Duration.ofHours(1));
        Clock anHourBehind = Clock.offset(Clock.systemUTC(), Duration.ofHours(-1));

        supervisor = DiscoverySupervisor.builder().clock(anHourBehind).build();
        supervisor.start(true, DiscoveryConfig.file(new FileStoreConfig(root, "dynamo", List.of(),
                FileStoreConfig.DEFAULT_TTL, FileStoreConfig.DEFAULT_RESCAN_INTERVAL))).join();
        DynamoRegistry registry = supervisor.registry();

        await().atMost(20, TimeUnit.SECONDS).until(() -> registry.snapshot().workers().stream()
                .map(DynamoWorker::instanceId).toList().equals(List.of(7L)));
    }
}
