package dev.continuum.router.sim;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * Kubernetes names for simulated workers and Dynamo's {@code hash_pod_name} (kube/utils.rs upstream): SipHash-1-3 with
 * zero keys over the name's UTF-8 bytes and one {@code 0xFF} (Rust's {@code str::hash} into its default hasher),
 * masked to 53 bits. Written here from the SipHash paper's definition, so the simulator and the router do not
 * share an implementation that could be wrong the same way in both.
 */
final class PodNames {
    static final long ID_MASK = (1L << 53) - 1;

    private PodNames() {
    }

    static long hashPodName(String name) {
        byte[] text = name.getBytes(StandardCharsets.UTF_8);
        byte[] message = new byte[text.length + 1];
        System.arraycopy(text, 0, message, 0, text.length);
        message[text.length] = (byte) 0xFF;
        return sipHash13(message) & ID_MASK;
    }

    /** SipHash-1-3, keys (0, 0): one compression round per 8-byte word, three finalization rounds. */
    static long sipHash13(byte[] m) {
        long[] v = {0x736f6d6570736575L, 0x646f72616e646f6dL, 0x6c7967656e657261L, 0x7465646279746573L};
        int whole = m.length - m.length % 8;
        for (int i = 0; i < whole; i += 8) {
            compress(v, littleEndian(m, i, 8));
        }
        long last = ((long) m.length & 0xFF) << 56 | littleEndian(m, whole, m.length - whole);
        compress(v, last);
        v[2] ^= 0xFF;
        round(v);
        round(v);
        round(v);
        return v[0] ^ v[1] ^ v[2] ^ v[3];
    }

    private static void compress(long[] v, long word) {
        v[3] ^= word;
        round(v);
        v[0] ^= word;
    }

    private static void round(long[] v) {
        v[0] += v[1];
        v[1] = Long.rotateLeft(v[1], 13) ^ v[0];
        v[0] = Long.rotateLeft(v[0], 32);
        v[2] += v[3];
        v[3] = Long.rotateLeft(v[3], 16) ^ v[2];
        v[0] += v[3];
        v[3] = Long.rotateLeft(v[3], 21) ^ v[0];
        v[2] += v[1];
        v[1] = Long.rotateLeft(v[1], 17) ^ v[2];
        v[2] = Long.rotateLeft(v[2], 32);
    }

    private static long littleEndian(byte[] b, int from, int count) {
        long out = 0;
        for (int i = 0; i < count; i++) {
            out |= (b[from + i] & 0xFFL) << (8 * i);
        }
        return out;
    }

    /**
     * A DNS-1123 label fragment: lower case, {@code [a-z0-9-]}, anything else becomes {@code -}, at most
     * {@code max} characters, no leading or trailing {@code -}.
     */
    static String dns(String text, int max) {
        StringBuilder out = new StringBuilder();
        for (char c : text.toLowerCase(Locale.ROOT).toCharArray()) {
            out.append((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '-');
        }
        String s = out.length() > max ? out.substring(0, max) : out.toString();
        s = s.replaceAll("^-+|-+$", "");
        return s.isEmpty() ? "x" : s;
    }
}
