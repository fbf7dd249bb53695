package dev.continuum.router.kv.artifacts;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import java.util.Set;

/**
 * The content-addressed artifact cache: {@code <dir>/blobs/<64 hex>}, owner-only (directories 0700, files 0600).
 * A blob is written to a temporary file beside it and moved into place atomically, so a reader never sees half a
 * blob, and it is re-hashed on every read: one that no longer matches its name (modified on disk) is deleted.
 * Blocking: runs on the artifact pool only.
 */
public final class ArtifactCache {
    private static final Set<PosixFilePermission> DIR = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");

    private final Path blobs;
    private final long maxBytes;

    public ArtifactCache(Path dir, long maxBytes) {
        this.blobs = dir.resolve("blobs");
        this.maxBytes = maxBytes;
    }

    public Path blobs() {
        return blobs;
    }

    /** Where the blob of {@code hex} lives (whether or not it is there). */
    public Path path(String hex) {
        return blobs.resolve(hex);
    }

    /** What reading the blob of {@code hex} found. */
    public enum Read {
        /** Present and it hashes to its name. */
        VERIFIED,
        /** Not in the cache. */
        ABSENT,
        /** Present but modified on disk: deleted. */
        EVICTED
    }

    /** Verifies the blob of {@code hex}; a blob that does not hash to its name is deleted. */
    public Read verify(String hex) throws IOException {
        Path p = path(hex);
        if (!Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
            return Read.ABSENT;
        }
        String actual;
        try (InputStream in = Files.newInputStream(p, LinkOption.NOFOLLOW_LINKS)) {
            actual = Blake3.hex(in, maxBytes);
        } catch (Blake3.TooLarge e) {
            actual = "";
        }
        if (!actual.equals(hex)) {
            Files.deleteIfExists(p);
            return Read.EVICTED;
        }
        return Read.VERIFIED;
    }

    /** Writes {@code bytes} (already verified to hash to {@code hex}) as the blob of {@code hex}. */
    public Path put(String hex, byte[] bytes) throws IOException {
        ensureDirectory();
        Path target = path(hex);
        Path tmp = Files.createTempFile(blobs, ".incoming-", ".tmp", PosixFilePermissions.asFileAttribute(FILE));
        try {
            Files.write(tmp, bytes, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.SYNC);
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
        return target;
    }

    /** Deletes the blob of {@code hex} (its pin was removed). */
    public void remove(String hex) throws IOException {
        Files.deleteIfExists(path(hex));
    }

    private void ensureDirectory() throws IOException {
        Optional<Path> parent = Optional.ofNullable(blobs.getParent());
        if (parent.isPresent() && !Files.isDirectory(parent.get())) {
            Files.createDirectories(parent.get(), PosixFilePermissions.asFileAttribute(DIR));
        }
        try {
            Files.createDirectory(blobs, PosixFilePermissions.asFileAttribute(DIR));
        } catch (FileAlreadyExistsException e) {
            // Someone else's directory must not hold what we load: it has to be ours, owner-only.
            if (!Files.isDirectory(blobs, LinkOption.NOFOLLOW_LINKS)) {
                throw new IOException(blobs + " is not a directory");
            }
            Files.setPosixFilePermissions(blobs, DIR);
        }
    }
}
