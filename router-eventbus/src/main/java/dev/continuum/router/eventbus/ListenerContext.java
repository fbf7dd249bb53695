package dev.continuum.router.eventbus;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.function.LongSupplier;

/** What the listener's handlers share: the current state, the sessions, meters, timers and ID source. */
final class ListenerContext {
    private volatile ListenerState state;
    final SessionRegistry sessions;
    final BusMetrics metrics;
    final ListenerTimings timings;
    /** Monotonic nanoseconds for idle tracking; tests substitute their own clock. */
    final LongSupplier nanoTime;
    private final SecureRandom random = new SecureRandom();

    ListenerContext(ListenerState state, SessionRegistry sessions, BusMetrics metrics, ListenerTimings timings,
                    LongSupplier nanoTime) {
        this.state = state;
        this.sessions = sessions;
        this.metrics = metrics;
        this.timings = timings;
        this.nanoTime = nanoTime;
    }

    ListenerState state() {
        return state;
    }

    void state(ListenerState next) {
        state = next;
    }

    /** {@code sess-} and 128 random bits: a session ID is not guessable, though it alone grants nothing. */
    String newSessionId() {
        byte[] bytes = new byte[16];
        random.nextBytes(bytes);
        return "sess-" + HexFormat.of().formatHex(bytes);
    }
}
