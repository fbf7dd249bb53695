package dev.continuum.router.discovery.etcd;

import dev.continuum.router.discovery.config.EtcdConfig;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import org.jspecify.annotations.Nullable;

/**
 * Everything discovery may do to etcd: read a key range at a revision and watch a prefix from a revision.
 * The router is a passive observer of Dynamo's registry: it never writes or deletes a key and never takes or
 * renews a lease, so this interface has no such operation and its implementation calls none (a test scans
 * the module's bytecode to keep it so).
 */
public interface EtcdReader extends AutoCloseable {
    /**
     * A jetcd-backed reader for {@code config} (TLS, authentication); connects lazily. Without a closer,
     * {@link #close()} closes the client at once (jetcd may then log a failed resume of a watch).
     */
    static EtcdReader connect(EtcdConfig config) {
        return JetcdReader.connect(config, null);
    }

    /** As {@link #connect(EtcdConfig)}, closing the client a moment after {@link #close()} on {@code closer}. */
    static EtcdReader connect(EtcdConfig config, ScheduledExecutorService closer) {
        return JetcdReader.connect(config, closer);
    }

    /**
     * Reads up to {@code limit} keys in {@code [fromKey, end of prefix)} in key order.
     *
     * @param revision the revision to read at, or 0 for the current one
     * @param keysOnly whether to leave values out (used to step over a key whose value cannot be received)
     */
    RangePage range(String prefix, byte[] fromKey, long revision, int limit, boolean keysOnly, Duration timeout)
            throws EtcdReadException, InterruptedException;

    /** Watches every key under {@code prefix} from {@code fromRevision} on; see {@link WatchListener}. */
    WatchHandle watch(String prefix, long fromRevision, WatchListener listener);

    /** Closes the connection; open watches end without a callback. */
    @Override
    void close();

    /**
     * One key (raw bytes: pagination must continue after exactly this key even if it is not UTF-8) and its
     * value (empty when read keys-only).
     */
    record Entry(byte[] key, byte[] value) {
        public Entry {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(value, "value");
        }

        public String keyText() {
            return new String(key, StandardCharsets.UTF_8);
        }
    }

    /**
     * @param revision the store revision the page was read at
     * @param more     whether keys remain after the last entry
     */
    record RangePage(List<Entry> entries, long revision, boolean more) {
        public RangePage {
            entries = List.copyOf(entries);
        }
    }

    /** Callbacks of one watch; they may come from the client's I/O threads and must not block. */
    interface WatchListener {
        /** The server confirmed the watch. */
        void opened();

        void events(List<DiscoveryEvent> events);

        /** The watch ended; called at most once, not after {@link WatchHandle#close()}. */
        void ended(WatchEnd end);
    }

    /**
     * Why a watch ended. jetcd resumes a watch by itself after transport errors (UNAVAILABLE, INTERNAL),
     * silently, from its last revision; discovery instead treats every end as the end of the pass and
     * resyncs, so the reader reports the first error and stops the watcher.
     */
    record WatchEnd(Kind kind, String message, @Nullable Throwable cause) {
        public enum Kind {
            /** The start revision was compacted away. */
            COMPACTED,
            /** The server cancelled the watch (permission, leader, shutdown). */
            CANCELLED,
            /** The stream failed (connection lost, server gone). */
            ERROR,
            /** The stream completed. */
            COMPLETED
        }
    }

    /** Stops a watch; idempotent. */
    interface WatchHandle extends AutoCloseable {
        @Override
        void close();
    }
}
