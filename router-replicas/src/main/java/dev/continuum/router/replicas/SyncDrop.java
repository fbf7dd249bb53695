package dev.continuum.router.replicas;

/** Why a replica-sync message was dropped; the closed labels of {@code continuum_replicas_dropped_messages_total}. */
enum SyncDrop {
    /** Larger than {@code max_message_bytes}: dropped before it is copied. */
    OVERSIZED("oversized"),
    /** Not the format, or outside its bounds. */
    MALFORMED("malformed"),
    /** Its replica ID is not its subject's, or it is this replica's own ID from another process. */
    FORGED("forged"),
    /** From an older epoch of a peer that restarted, or a batch already applied. */
    STALE("stale"),
    /** The sync thread's inbound queue was full. */
    BACKLOG("backlog"),
    /** From a peer beyond {@code max_peers}. */
    PEERS_LIMIT("peers_limit"),
    /** An add beyond a peer partition's bound, or a resync's buffer was full. */
    OVER_BOUND("over_bound");

    private final String label;

    SyncDrop(String label) {
        this.label = label;
    }

    String label() {
        return label;
    }
}
