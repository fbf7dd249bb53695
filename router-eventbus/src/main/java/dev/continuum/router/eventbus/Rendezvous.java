package dev.continuum.router.eventbus;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Rendezvous (highest-random-weight) placement of streams on broker sessions (docs/event-bus.md, "Several
 * brokers per namespace"). A session's weight for a stream is the first 8 bytes, big-endian and unsigned, of
 * {@code SHA-256(u64be(len(key)) || key || client_id)}, with the key and client ID in UTF-8. It depends only on
 * the stream's key and the broker's configured client ID, so every router replica places a stream on the same
 * broker, a broker that joins takes only the streams it now wins, and one that leaves gives only its own away.
 */
public final class Rendezvous {
    private Rendezvous() {
    }

    /** The key of a publisher stream: namespace, host, port and topic, newline-separated. */
    public static String key(SubscribeTarget.ZmqTcp target, String topic) {
        return target.namespace() + '\n' + target.host() + '\n' + target.port() + '\n' + topic;
    }

    public static long weight(String key, String clientId) {
        byte[] keyBytes = key.getBytes(StandardCharsets.UTF_8);
        MessageDigest sha256;
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
        sha256.update(ByteBuffer.allocate(Long.BYTES).putLong(keyBytes.length).array());
        sha256.update(keyBytes);
        sha256.update(clientId.getBytes(StandardCharsets.UTF_8));
        return ByteBuffer.wrap(sha256.digest()).getLong();
    }

    /** {@code sessions} by descending weight for {@code key}; equal weights (never in practice) by client ID. */
    public static List<BusSession> rank(List<BusSession> sessions, String key) {
        record Weighted(BusSession session, long weight) {
        }
        List<Weighted> weighted = new ArrayList<>(sessions.size());
        for (BusSession s : sessions) {
            weighted.add(new Weighted(s, weight(key, s.clientId())));
        }
        weighted.sort(Comparator.comparingLong((Weighted w) -> w.weight() ^ Long.MIN_VALUE).reversed()
                .thenComparing(w -> w.session().clientId()));
        List<BusSession> out = new ArrayList<>(weighted.size());
        for (Weighted w : weighted) {
            out.add(w.session());
        }
        return out;
    }
}
