package dev.continuum.router.shim;

import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.load.LoadStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Chooses the decode and prefill (worker, dp_rank) of one request from a fleet snapshot. Implementations are
 * thread-safe and never block: they run on the event loop of every pinned request. Replaceable at run time
 * (the KV-aware picker replaces the default) through whatever holds it.
 */
public interface DynamoWorkerPicker {
    /**
     * Picks for {@code request}, or returns null when no worker in the request's namespaces serves the model
     * (the request then takes standard routing). A non-null selection has been recorded as dispatched and
     * counted in {@code continuum_dynamo_selection_total}.
     */
    @Nullable Selection pick(DynamoSnapshot snapshot, PickRequest request);

    /**
     * The default load-only picker (see {@code docs/request-path.md}), without its upkeep: the first pick of
     * each fleet view builds the candidate index, and the dispatch ledger is never swept (ranks that left keep
     * an empty ledger each). The router uses {@link LoadBasedPicking}, which runs both off the request path.
     *
     * @param store    the load store the load supervisor feeds
     * @param ticker   the same monotonic nanosecond ticker as the store's (it compares dispatch times with
     *                 sample receipt times); {@code System::nanoTime} in production
     * @param registry where {@code continuum_dynamo_selection_total} is registered
     */
    static DynamoWorkerPicker loadBased(LoadStore store, LongSupplier ticker, MeterRegistry registry) {
        return new LoadBasedPicker(store, ticker, new SelectionMetrics(registry));
    }
}
