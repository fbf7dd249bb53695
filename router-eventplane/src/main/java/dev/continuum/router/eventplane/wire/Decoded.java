package dev.continuum.router.eventplane.wire;

import java.util.Objects;

/**
 * A decoder's outcome: the value, or the counted reason it was dropped.
 *
 * @param <T> the decoded type
 */
public sealed interface Decoded<T> permits Decoded.Ok, Decoded.Dropped {
    /** A value decoded exactly. */
    record Ok<T>(T value) implements Decoded<T> {
        public Ok {
            Objects.requireNonNull(value, "value");
        }
    }

    /** A non-fatal drop; {@code detail} names the field or check, never peer bytes. */
    record Dropped<T>(EventDrop reason, String detail) implements Decoded<T> {
        public Dropped {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(detail, "detail");
        }
    }
}
