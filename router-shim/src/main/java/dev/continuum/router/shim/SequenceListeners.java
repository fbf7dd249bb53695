package dev.continuum.router.shim;

import dev.continuum.router.core.logging.LogSafe;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registered {@link SequenceListener}s, as an array replaced whole on (un)registration so the drainer tells
 * them without allocating. A listener that throws is logged once and keeps being told.
 */
final class SequenceListeners {
    private static final Logger LOG = LoggerFactory.getLogger(SequenceListeners.class);

    private volatile SequenceListener[] all = new SequenceListener[0];
    private volatile boolean failed;

    /** Registers {@code listener} until the returned handle is closed (registration only, never per request). */
    synchronized AutoCloseable add(SequenceListener listener) {
        Objects.requireNonNull(listener, "listener");
        List<SequenceListener> next = new ArrayList<>(List.of(all));
        next.add(listener);
        all = next.toArray(SequenceListener[]::new);
        return () -> remove(listener);
    }

    private synchronized void remove(SequenceListener listener) {
        List<SequenceListener> next = new ArrayList<>(List.of(all));
        next.remove(listener);
        all = next.toArray(SequenceListener[]::new);
    }

    boolean isEmpty() {
        return all.length == 0;
    }

    void dispatched(DispatchedSequence d) {
        for (SequenceListener l : all) {
            try {
                l.dispatched(d);
            } catch (RuntimeException e) {
                failed(e);
            }
        }
    }

    void firstToken(long id) {
        for (SequenceListener l : all) {
            try {
                l.firstToken(id);
            } catch (RuntimeException e) {
                failed(e);
            }
        }
    }

    void ended(long id, SequenceEnd reason) {
        for (SequenceListener l : all) {
            try {
                l.ended(id, reason);
            } catch (RuntimeException e) {
                failed(e);
            }
        }
    }

    private void failed(RuntimeException e) {
        if (!failed) {
            failed = true;
            LOG.warn("active-sequence listener failed (logged once): {}", LogSafe.escape(e));
        }
    }
}
