package dev.continuum.router.sim;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import org.bouncycastle.crypto.digests.Blake3Digest;

/** A file's checksum as a model card's {@code CheckedFile} writes it: {@code blake3:<64 lowercase hex>}. */
final class Blake3 {
    private Blake3() {
    }

    static String checksum(Path file) {
        Blake3Digest digest = new Blake3Digest(256);
        byte[] buffer = new byte[1 << 16];
        try (InputStream in = Files.newInputStream(file)) {
            for (int n = in.read(buffer); n > 0; n = in.read(buffer)) {
                digest.update(buffer, 0, n);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(file + ": cannot be read", e);
        }
        byte[] out = new byte[32];
        digest.doFinal(out, 0);
        return "blake3:" + HexFormat.of().formatHex(out);
    }
}
