package dev.continuum.router.discovery.source;

import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Where a watcher reads the fleet from (etcd, the file store, a test script). One {@link Pass} is a
 * connection's lifetime: read the complete state of every watched prefix, then follow changes until the
 * stream ends for any reason. The watcher answers every end the same way: back off, then a new pass that
 * rebuilds from scratch, so missed events can never leave the view stale.
 */
public interface WatchSource {
    /**
     * Connects and reads the complete state of the watched prefixes, within {@code seedTimeout} (the first
     * listing is bounded; following changes is not).
     *
     * @throws Exception when the source cannot be reached or read in time; the watcher backs off and retries
     */
    Pass open(Duration seedTimeout) throws Exception;

    /** A short description for log lines (never credentials). */
    String describe();

    /** One connection's lifetime. */
    interface Pass extends AutoCloseable {
        /** The complete state at one point in time, to be applied as one resync. */
        List<DiscoveryEvent.Put> seed();

        /**
         * Starts following changes made after the first listing. Calls {@link PassListener#opened()} once every watch is
         * established, {@link PassListener#events} for changes, and {@link PassListener#ended} exactly once.
         * Callbacks may come from any thread and must not block.
         */
        void follow(PassListener listener);

        /**
         * The current state of each key (a {@link DiscoveryEvent.Put}, or a {@link DiscoveryEvent.Delete} when
         * it is gone), for keys the reducer refused at capacity and now has room for: it keeps keys only, so the
         * value is read again. Called on the watcher thread between batches, so it may block (bounded); what it
         * returns is at least as new as every event already delivered, and later events apply on top.
         *
         * @throws Exception when the source cannot answer; the watcher ends the pass (the next resync admits)
         */
        List<DiscoveryEvent> reread(List<String> keys) throws Exception;

        /** Stops following and releases the connection; idempotent, never throws. */
        @Override
        void close();
    }

    /** Receives what a pass sees after its seed. */
    interface PassListener {
        void opened();

        void events(List<DiscoveryEvent> events);

        /**
         * @param reason why the pass ended (for the log line)
         * @param cause  the error, if there was one
         */
        void ended(String reason, @Nullable Throwable cause);
    }
}
