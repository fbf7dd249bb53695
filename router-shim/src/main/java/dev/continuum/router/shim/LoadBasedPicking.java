package dev.continuum.router.shim;

import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.load.LoadStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The load-based picker with the upkeep it needs off the request path, as a {@link
 * dev.continuum.router.core.lifecycle.Lifecycle}: while started, one daemon thread rebuilds the picker's
 * candidate index when the registry's fleet view changes (so no request pays for it) and sweeps its
 * dispatch ledger every {@link #SWEEP_INTERVAL} (so no request pays for that either, and departed ranks are
 * forgotten), and drains the active sequences every {@link #DRAIN_INTERVAL}. A stopped or never-started
 * picking still picks: the first request after a change builds the index, ledgers of departed ranks wait for
 * the next start, and the active sequences are drained only by picking threads that find a long queue.
 *
 * <pre>{@code
 * LoadBasedPicking picking = LoadBasedPicking.create(load.store(), ticker, meterRegistry, discovery.registry());
 * stack.push(picking);   // start() before the first request, stop() on shutdown
 * ShimDispatcher.create(discovery.registry()::snapshot, shimConfig, picking.picker(), meterRegistry);
 * }</pre>
 */
public final class LoadBasedPicking extends StartStopSupport {
    /** How often the dispatch ledger is swept: aged buckets trimmed, departed ranks forgotten. */
    public static final Duration SWEEP_INTERVAL = Duration.ofSeconds(1);
    /**
     * How often the active sequences' queue is drained (shared blocks deduplicated, listeners told, lifetimes
     * checked): a hashed sequence's blocks drop at most this long after its end.
     */
    public static final Duration DRAIN_INTERVAL = Duration.ofMillis(10);
    private static final Logger LOG = LoggerFactory.getLogger(LoadBasedPicking.class);

    /** Where the upkeep runs: a periodic task and one-off tasks, released on stop. */
    interface Scheduler extends Executor {
        /** Runs {@code task} every {@code period} until the returned handle is closed. */
        AutoCloseable every(Duration period, Runnable task);

        /** Releases the scheduler's threads, if it owns any. */
        void shutdown();
    }

    private final LoadBasedPicker picker;
    private final DynamoRegistry fleet;
    private final Supplier<Scheduler> schedulers;
    private @Nullable Scheduler scheduler;
    private @Nullable AutoCloseable sweeping;
    private @Nullable AutoCloseable draining;
    private DynamoRegistry.@Nullable Subscription following;

    LoadBasedPicking(LoadBasedPicker picker, DynamoRegistry fleet, Supplier<Scheduler> schedulers) {
        this.picker = Objects.requireNonNull(picker, "picker");
        this.fleet = Objects.requireNonNull(fleet, "fleet");
        this.schedulers = Objects.requireNonNull(schedulers, "schedulers");
    }

    /**
     * @param store    the load store the load supervisor feeds
     * @param ticker   the same monotonic nanosecond ticker as the store's; {@code System::nanoTime} in production
     * @param meters   where {@code continuum_dynamo_selection_total} is registered
     * @param fleet    the discovery registry whose snapshots the dispatcher passes to the picker
     */
    public static LoadBasedPicking create(LoadStore store, LongSupplier ticker, MeterRegistry meters,
            DynamoRegistry fleet) {
        LoadBasedPicker picker = new LoadBasedPicker(store, ticker, new SelectionMetrics(meters));
        ActiveSequenceMetrics.register(meters, picker.sequences());
        return new LoadBasedPicking(picker, fleet, LoadBasedPicking::daemonScheduler);
    }

    /**
     * This router's active sequences per rank (read API and listener seam), shared by both pickers; see
     * {@link ActiveSequences}.
     */
    public ActiveSequences activeSequences() {
        return picker.sequences();
    }

    /** The picker to hand to the dispatcher; usable in any lifecycle state. */
    public DynamoWorkerPicker picker() {
        return picker;
    }

    /**
     * The KV-aware picker over this picking's load-based picker: the same candidate index, dispatch ledger and
     * selection counters (so switching between the two on a reload loses no unanswered dispatch), plus
     * {@code continuum_dynamo_kv_selection_total}. Softmax sampling draws from {@link ThreadLocalRandom}.
     *
     * @param index    the KV index's read side
     * @param settings the live {@code dynamo.kv} knobs, read once per pick
     * @param meters   where {@code continuum_dynamo_kv_selection_total} is registered
     */
    public DynamoWorkerPicker kvAware(PrefixOverlap index, Supplier<KvPickerSettings> settings, MeterRegistry meters) {
        return kvAware(index, settings, meters, KvPickListener.NONE);
    }

    /** As above, telling {@code listener} each KV-scored pick (the router's cache prediction, approximate mode). */
    public DynamoWorkerPicker kvAware(PrefixOverlap index, Supplier<KvPickerSettings> settings, MeterRegistry meters,
            KvPickListener listener) {
        return new KvAwarePicker(picker, index, settings, new KvSelectionMetrics(meters),
                () -> ThreadLocalRandom.current().nextDouble(), listener);
    }

    @Override
    protected String lifecycleName() {
        return "picker upkeep";
    }

    @Override
    protected CompletableFuture<Void> doStart() {
        Scheduler s = schedulers.get();
        scheduler = s;
        following = fleet.subscribe(s, generation -> picker.prepare(fleet.snapshot()));
        s.execute(() -> picker.prepare(fleet.snapshot()));
        sweeping = s.every(SWEEP_INTERVAL, picker::sweepLedger);
        draining = s.every(DRAIN_INTERVAL, picker::drainSequences);
        return CompletableFuture.completedFuture(null);
    }

    @Override
    protected CompletableFuture<Void> doStop() throws Exception {
        if (following != null) {
            following.close();
        }
        if (sweeping != null) {
            sweeping.close();
        }
        if (draining != null) {
            draining.close();
        }
        if (scheduler != null) {
            scheduler.shutdown();
        }
        return CompletableFuture.completedFuture(null);
    }

    private static Scheduler daemonScheduler() {
        ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "continuum-picker-upkeep");
            t.setDaemon(true);
            return t;
        });
        return new Scheduler() {
            @Override
            public AutoCloseable every(Duration period, Runnable task) {
                // A failing run is logged and the next one still comes (a scheduled task that throws is cancelled).
                Runnable guarded = () -> {
                    try {
                        task.run();
                    } catch (RuntimeException e) {
                        LOG.warn("picker upkeep failed; retrying in {}", period, e);
                    }
                };
                ScheduledFuture<?> f = executor.scheduleWithFixedDelay(guarded, period.toNanos(), period.toNanos(),
                        TimeUnit.NANOSECONDS);
                return () -> f.cancel(false);
            }

            @Override
            public void execute(Runnable command) {
                executor.execute(command);
            }

            @Override
            public void shutdown() {
                executor.shutdownNow();
            }
        };
    }
}
