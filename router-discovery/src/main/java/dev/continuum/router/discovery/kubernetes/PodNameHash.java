package dev.continuum.router.discovery.kubernetes;

import java.nio.charset.StandardCharsets;

/**
 * Dynamo's {@code hash_pod_name}: the instance ID a Kubernetes-discovered worker registers under, derived from
 * its Pod name. Upstream hashes the name as a Rust {@code str} with {@code DefaultHasher::new()}, which is
 * SipHash-1-3 with both keys zero over the UTF-8 bytes followed by one {@code 0xFF} byte (how {@code str}
 * implements {@code Hash}), and keeps the low 53 bits so the ID survives a round trip through a JSON double.
 *
 * <p>Implemented here directly rather than through a crypto library: it is 40 lines, allocation-free apart
 * from the UTF-8 encoding, and pinned by vectors computed with rustc in {@code PodNameHashTest}.
 */
public final class PodNameHash {
    /** 53 bits: the IDs must be exact as JSON numbers (IEEE doubles) on the frontend's side. */
    public static final long ID_MASK = 0x001F_FFFF_FFFF_FFFFL;

    private PodNameHash() {
    }

    /** The instance ID Dynamo derives from {@code podName}. */
    public static long hashPodName(String podName) {
        byte[] name = podName.getBytes(StandardCharsets.UTF_8);
        return sipHash13ZeroKeys(name, 0xFF) & ID_MASK;
    }

    /** SipHash-1-3, keys (0, 0), over {@code bytes} followed by the single byte {@code suffix}. */
    static long sipHash13ZeroKeys(byte[] bytes, int suffix) {
        long v0 = 0x736f6d6570736575L;
        long v1 = 0x646f72616e646f6dL;
        long v2 = 0x6c7967656e657261L;
        long v3 = 0x7465646279746573L;
        int length = bytes.length + 1;
        int fullWords = length / 8;
        long m;
        for (int w = 0; w < fullWords; w++) {
            m = 0;
            for (int i = 0; i < 8; i++) {
                m |= (byteAt(bytes, suffix, w * 8 + i) & 0xFFL) << (8 * i);
            }
            v3 ^= m;
            // One compression round (the "1" of SipHash-1-3).
            v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
            v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
            v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
            v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
            v0 ^= m;
        }
        // The last word: the remaining bytes, with the total length (mod 256) in the top byte.
        m = ((long) length & 0xFF) << 56;
        for (int i = fullWords * 8; i < length; i++) {
            m |= (byteAt(bytes, suffix, i) & 0xFFL) << (8 * (i - fullWords * 8));
        }
        v3 ^= m;
        v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
        v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
        v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
        v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
        v0 ^= m;
        v2 ^= 0xFF;
        // Three finalization rounds (the "3").
        for (int r = 0; r < 3; r++) {
            v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
            v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
            v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
            v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
        }
        return v0 ^ v1 ^ v2 ^ v3;
    }

    private static int byteAt(byte[] bytes, int suffix, int index) {
        return index < bytes.length ? bytes[index] : suffix;
    }
}
