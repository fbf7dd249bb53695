package dev.continuum.router.replicas;

import java.util.List;
import java.util.Objects;

/**
 * One message on a replica's subject or a snapshot reply (docs/replicas.md, "Message format").
 *
 * @param kind    what the message is
 * @param replica the sender's replica ID (must equal its subject's token)
 * @param epoch   the sender's process start: a new epoch is a restarted peer whose old part is dropped
 * @param seq     a batch's own number (one more than the previous batch of the epoch); a heartbeat's last batch
 *                number; the batch number a snapshot is consistent with
 * @param chunk   a snapshot chunk's index (0 otherwise)
 * @param chunks  a snapshot's chunk count (1 otherwise)
 * @param events  a batch's events in order, or a snapshot chunk's live sequences (an {@code Add}, then a
 *                {@code First} when its prefill is over)
 */
record SyncMessage(Kind kind, String replica, long epoch, long seq, int chunk, int chunks, List<SyncEvent> events) {
    enum Kind {
        BATCH(1), HEARTBEAT(2), SNAPSHOT(3), SNAPSHOT_REQUEST(4);

        final int code;

        Kind(int code) {
            this.code = code;
        }

        static Kind of(int code) {
            for (Kind k : values()) {
                if (k.code == code) {
                    return k;
                }
            }
            throw new SyncCodec.Malformed("unknown kind " + code);
        }
    }

    SyncMessage {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(replica, "replica");
        events = List.copyOf(events);
    }
}
