package dev.continuum.router.kv.artifacts;

import java.io.IOException;
import java.io.InputStream;
import java.util.HexFormat;
import org.bouncycastle.crypto.digests.Blake3Digest;

/** BLAKE3-256 as {@code b3sum} prints it (64 lowercase hex digits), the card's {@code CheckedFile} checksum. */
public final class Blake3 {
    private static final HexFormat HEX = HexFormat.of();

    private Blake3() {
    }

    public static String hex(byte[] data) {
        return hex(data, 0, data.length);
    }

    public static String hex(byte[] data, int off, int len) {
        Blake3Digest d = new Blake3Digest(256);
        d.update(data, off, len);
        return finish(d);
    }

    /** Hashes the rest of {@code in}, reading at most {@code limit} bytes; more throws {@link TooLarge}. */
    public static String hex(InputStream in, long limit) throws IOException {
        Blake3Digest d = new Blake3Digest(256);
        byte[] buf = new byte[64 * 1024];
        long total = 0;
        for (int n; (n = in.read(buf)) > 0; ) {
            total += n;
            if (total > limit) {
                throw new TooLarge(limit);
            }
            d.update(buf, 0, n);
        }
        return finish(d);
    }

    private static String finish(Blake3Digest d) {
        byte[] out = new byte[32];
        d.doFinal(out, 0);
        return HEX.formatHex(out);
    }

    /** More bytes than an artifact may have. */
    public static final class TooLarge extends IOException {
        private static final long serialVersionUID = 1L;

        public TooLarge(long limit) {
            super("larger than " + limit + " bytes");
        }
    }
}
