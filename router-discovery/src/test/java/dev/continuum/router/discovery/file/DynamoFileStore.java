package dev.continuum.router.discovery.file;

import dev.continuum.router.testing.DynamoRecords;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;

/**
 * Writes a file store the way Dynamo's {@code storage/kv/file.rs} does: a bucket is a directory, a key is one
 * file named by the percent-encoded bucket-relative key, written to {@code .tmp_<16 hex>} and renamed, and
 * kept alive by touching its mtime.
 */
final class DynamoFileStore {
    private final Path root;
    private final SecureRandom random = new SecureRandom();

    DynamoFileStore(Path root) {
        this.root = root;
    }

    /** {@code key} is the full key ({@code v1/instances/dynamo/...}). */
    Path write(String key, String json) throws IOException {
        Path file = fileOf(key);
        Files.createDirectories(file.getParent());
        byte[] name = new byte[8];
        random.nextBytes(name);
        Path tmp = file.resolveSibling(".tmp_" + HexFormat.of().formatHex(name));
        Files.writeString(tmp, json, StandardCharsets.UTF_8);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        return file;
    }

    /** A write that is still in progress: only the temporary file exists. */
    Path writeTemporaryOnly(String key, String json) throws IOException {
        Path file = fileOf(key);
        Files.createDirectories(file.getParent());
        Path tmp = file.resolveSibling(".tmp_00112233aabbccdd");
        Files.writeString(tmp, json, StandardCharsets.UTF_8);
        return tmp;
    }

    void touch(String key) throws IOException {
        Files.setLastModifiedTime(fileOf(key), FileTime.from(Instant.now()));
    }

    /** Makes the file look last touched {@code age} ago (a worker that died then). */
    void age(String key, Duration age) throws IOException {
        Files.setLastModifiedTime(fileOf(key), FileTime.from(Instant.now().minus(age)));
    }

    void remove(String key) throws IOException {
        Files.delete(fileOf(key));
    }

    Path fileOf(String key) {
        int bucketEnd = key.startsWith("v1/event_channels/") ? "v1/event_channels".length()
                : key.startsWith("v1/instances/") ? "v1/instances".length() : "v1/mdc".length();
        return root.resolve(key.substring(0, bucketEnd))
                .resolve(DynamoRecords.fileStoreName(key.substring(bucketEnd + 1)));
    }
}
