package dev.continuum.router.discovery.config;

import dev.continuum.router.core.config.ConfigNode;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;

/** {@code dynamo.discovery.file}: Dynamo's file store (root, namespaces, ttl and rescan interval). */
final class FileStoreBinder {
    private FileStoreBinder() {
    }

    /** @param defaults the section's defaults (its root comes from the environment) */
    static FileStoreConfig bind(ConfigNode file, FileStoreConfig defaults) {
        ConfigNode rootNode = file.get("root");
        Path root = defaults.root();
        String rootText = rootNode.asPathString();
        if (rootText != null) {
            try {
                if (rootText.isEmpty()) {
                    rootNode.invalid("a directory path");
                } else {
                    root = Path.of(rootText);
                }
            } catch (InvalidPathException e) {
                rootNode.invalid("a directory path");
            }
        }
        NamespaceList namespaces = NamespaceList.bindStoreKeys(file);
        ConfigNode ttlNode = file.get("ttl");
        // Upstream floors the TTL at 1 s.
        Duration ttl = ttlNode.asDuration(FileStoreConfig.DEFAULT_TTL, Duration.ofSeconds(1), Duration.ofHours(1));
        ConfigNode rescanNode = file.get("rescan_interval");
        Duration rescan = rescanNode.asDuration(FileStoreConfig.DEFAULT_RESCAN_INTERVAL, Duration.ofMillis(10),
                Duration.ofMinutes(10));
        if (rescan.compareTo(ttl) > 0) {
            rescanNode.warning("rescans less often than the ttl (" + ttl.toMillis() + " ms): expired workers stay "
                    + "listed until the next rescan");
        }
        return new FileStoreConfig(root, namespaces.one(), namespaces.several(), ttl, rescan);
    }
}
