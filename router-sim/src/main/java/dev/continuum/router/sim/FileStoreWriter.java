package dev.continuum.router.sim;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Writes keys into Dynamo's file store as one Dynamo process does (lib/runtime/src/storage/kv/file.rs): a bucket is a
 * directory under the root, a key is one flat file whose name is the bucket-relative key percent-encoded with
 * the NON_ALPHANUMERIC set, every write goes to {@code .tmp_<16 hex>} and is renamed into place, and the
 * owner touches the mtime of its files (the keep-alive) and deletes them on a clean stop.
 *
 * <p>Thread-safe: the owned list is copy-on-write, and each file is only ever replaced by a rename.
 */
final class FileStoreWriter {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path root;
    private final List<Path> owned = new CopyOnWriteArrayList<>();

    FileStoreWriter(Path root) {
        this.root = root;
    }

    Path root() {
        return root;
    }

    /** Writes {@code json} under {@code bucket/key}; returns the file. */
    Path put(String bucket, String key, String json) {
        try {
            Path dir = root.resolve(bucket);
            Files.createDirectories(dir);
            Path file = dir.resolve(fileName(key));
            Path tmp = dir.resolve(".tmp_" + HexFormat.of().toHexDigits(RANDOM.nextLong()));
            Files.writeString(tmp, json, StandardCharsets.UTF_8);
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
            if (!owned.contains(file)) {
                owned.add(file);
            }
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The keep-alive: moves every owned file's mtime to now (a file already gone is skipped). */
    void touchAll() {
        FileTime now = FileTime.fromMillis(System.currentTimeMillis());
        for (Path file : owned) {
            try {
                Files.setLastModifiedTime(file, now);
            } catch (IOException e) {
                // Deleted under us (a reaper, or a test): the next put writes it again.
            }
        }
    }

    /** Deletes every owned file, as Dynamo does on a clean shutdown. */
    void removeAll() {
        for (Path file : owned) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                // Best effort: the TTL retires a file a stop could not delete.
            }
        }
        owned.clear();
    }

    /** The file name of a bucket-relative key: every byte outside {@code [A-Za-z0-9]} becomes {@code %XX}. */
    static String fileName(String key) {
        return percentEncode(key, false);
    }

    /** An event-channel key segment: {@code [A-Za-z0-9_-]} pass through, other bytes become {@code %XX}. */
    static String segment(String value) {
        return percentEncode(value, true);
    }

    private static String percentEncode(String value, boolean keepDashAndUnderscore) {
        StringBuilder out = new StringBuilder();
        for (byte b : value.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xFF;
            boolean alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
            if (alnum || (keepDashAndUnderscore && (c == '-' || c == '_'))) {
                out.append((char) c);
            } else {
                out.append('%').append(HexFormat.of().withUpperCase().toHexDigits((byte) c));
            }
        }
        return out.toString();
    }
}
