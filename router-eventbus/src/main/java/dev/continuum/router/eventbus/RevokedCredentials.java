package dev.continuum.router.eventbus;

import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.Set;

/**
 * The last {@value #CAPACITY} credentials a reload removed or replaced, so their holders hear
 * {@code credential_revoked} instead of {@code unauthenticated}. A bounded ring: an operator who rotates
 * more than that sees older ones fall back to {@code unauthenticated}. Immutable: a reload builds the next.
 */
final class RevokedCredentials {
    static final int CAPACITY = 256;
    static final RevokedCredentials EMPTY = new RevokedCredentials(new ArrayDeque<>());

    private final ArrayDeque<String> order;
    private final Set<String> members;

    private RevokedCredentials(ArrayDeque<String> order) {
        this.order = order;
        this.members = new HashSet<>(order);
    }

    /** A copy with {@code keys} added, dropping the oldest beyond capacity. */
    RevokedCredentials plus(Iterable<String> keys) {
        ArrayDeque<String> next = new ArrayDeque<>(order);
        for (String key : keys) {
            next.remove(key);
            next.addLast(key);
            while (next.size() > CAPACITY) {
                next.removeFirst();
            }
        }
        return new RevokedCredentials(next);
    }

    /** A copy without {@code keys}: a credential configured again is live, not revoked. */
    RevokedCredentials minus(Set<String> keys) {
        ArrayDeque<String> next = new ArrayDeque<>(order);
        next.removeAll(keys);
        return new RevokedCredentials(next);
    }

    boolean contains(String key) {
        return members.contains(key);
    }

    int size() {
        return order.size();
    }

    static String tokenKey(String tokenHash) {
        return "token:" + tokenHash;
    }

    static String certKey(String brokerId) {
        return "cert:" + brokerId;
    }
}
