package dev.continuum.router.core.config;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The configs a {@link ConfigStore} applied, newest last: at most {@value #MAX_VERSIONS} versions, and at most
 * {@value #MAX_DOCUMENT_BYTES} bytes of kept documents in all (the oldest versions go first), so a run of large
 * files cannot grow the heap without bound. Each version keeps the bytes it was loaded from, so a rollback
 * validates and applies that document again, not a rendering of it. Versions are numbered from 1 for the
 * process's life; a number is never reused. Thread-safe (reloads add, admin calls read; both are rare).
 */
public final class ConfigHistory {
    public static final int MAX_VERSIONS = 100;
    public static final int MAX_DOCUMENT_BYTES = 32 * 1024 * 1024;

    /**
     * One applied config.
     *
     * @param trigger  what applied it: {@code startup}, {@code file-watch}, {@code sighup}, {@code admin},
     *                 {@code rollback}
     * @param document the bytes it was loaded from; null when there were none (built-in defaults) or they could
     *                 not be captured, and then it cannot be rolled back to
     */
    public record Version(int number, Instant appliedAt, String trigger, RouterConfig config,
                          @Nullable FileRead document) {
        public boolean restorable() {
            return document != null;
        }

        int size() {
            return document == null || document.content() == null ? 0 : document.content().remaining();
        }
    }

    private final ArrayDeque<Version> versions = new ArrayDeque<>();
    private int nextNumber = 1;
    private long bytes;

    synchronized Version add(Instant at, String trigger, RouterConfig config, @Nullable FileRead document) {
        Version v = new Version(nextNumber++, at, trigger, config, document);
        versions.addLast(v);
        bytes += v.size();
        while (versions.size() > MAX_VERSIONS || (bytes > MAX_DOCUMENT_BYTES && versions.size() > 1)) {
            bytes -= versions.removeFirst().size();
        }
        return v;
    }

    /** Oldest first. */
    public synchronized List<Version> versions() {
        return new ArrayList<>(versions);
    }

    public synchronized Optional<Version> version(int number) {
        for (Iterator<Version> it = versions.descendingIterator(); it.hasNext(); ) {
            Version v = it.next();
            if (v.number() == number) {
                return Optional.of(v);
            }
        }
        return Optional.empty();
    }

    /** The number of the running version (the newest), or 0 before the first. */
    public synchronized int currentNumber() {
        Version last = versions.peekLast();
        return last == null ? 0 : last.number();
    }
}
