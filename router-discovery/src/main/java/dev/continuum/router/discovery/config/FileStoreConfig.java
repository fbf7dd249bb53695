package dev.continuum.router.discovery.config;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.continuum.router.discovery.DynamoSnapshot;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * {@code dynamo.discovery.file}: Dynamo's file store ({@code DYN_DISCOVERY_BACKEND=file}) for single-node
 * fleets.
 *
 * @param root           the store's root ({@code $DYN_FILE_KV}, else {@code <tmpdir>/dynamo_store_kv})
 * @param ttl            a file is live while its mtime is within this of now (upstream's default TTL)
 * @param rescanInterval how often the directories are listed again, so expiry is seen without events
 */
public record FileStoreConfig(
        Path root,
        String namespace,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> namespaces,
        Duration ttl,
        Duration rescanInterval) {

    public static final Duration DEFAULT_TTL = Duration.ofSeconds(10);
    public static final Duration DEFAULT_RESCAN_INTERVAL = Duration.ofSeconds(1);

    public FileStoreConfig {
        Objects.requireNonNull(root, "root");
        Objects.requireNonNull(namespace, "namespace");
        namespaces = List.copyOf(namespaces);
        Objects.requireNonNull(ttl, "ttl");
        Objects.requireNonNull(rescanInterval, "rescanInterval");
    }

    public static FileStoreConfig defaults() {
        return defaults(System.getenv());
    }

    /** Upstream's default root: {@code $DYN_FILE_KV}, else {@code <java.io.tmpdir>/dynamo_store_kv}. */
    public static FileStoreConfig defaults(Map<String, String> environment) {
        return new FileStoreConfig(defaultRoot(environment), DynamoSnapshot.DEFAULT_NAMESPACE, List.of(), DEFAULT_TTL,
                DEFAULT_RESCAN_INTERVAL);
    }

    public static Path defaultRoot(Map<String, String> environment) {
        String fromEnv = environment.get("DYN_FILE_KV");
        return fromEnv != null && !fromEnv.isEmpty()
                ? Path.of(fromEnv)
                : Path.of(System.getProperty("java.io.tmpdir"), "dynamo_store_kv");
    }

    public List<String> effectiveNamespaces() {
        return namespaces.isEmpty() ? List.of(namespace) : namespaces;
    }
}
