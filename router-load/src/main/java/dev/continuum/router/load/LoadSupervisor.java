package dev.continuum.router.load;

import dev.continuum.router.eventplane.nats.NatsConnection;
import dev.continuum.router.eventplane.Backoff;
import dev.continuum.router.eventplane.SubscriptionView;
import dev.continuum.router.core.lifecycle.Lifecycle;
import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.eventplane.zmtp.CidrPolicy;
import dev.continuum.router.eventplane.zmtp.DirectTcpConnector;
import dev.continuum.router.eventplane.zmtp.ZmtpConnector;
import dev.continuum.router.eventplane.zmtp.ZmtpLimits;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.EventLoopGroup;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * Runs one kv_metrics subscription per discovered publisher and owns the {@link LoadStore} they feed.
 *
 * <pre>{@code
 * LoadSupervisor load = LoadSupervisor.builder(meterRegistry)
 *         .config(config.dynamo().section(loadSection))
 *         .build();
 * load.start().join();                                 // its event loop, follow thread and connector
 * AutoCloseable following = load.follow(registry);   // subscriptions now follow discovery
 * LoadSample s = load.store().freshDefault(workerId, dpRank);
 * load.reconfigure(newLoadConfig);                     // on a config reload
 * load.stop().join();                                  // at shutdown, after the HTTP server
 * }</pre>
 *
 * <p><b>Following the registry.</b> On every generation change the supervisor first installs the live
 * workers as the store's admission gate (evicting departed workers' samples and gauge series), then
 * diffs the publishers: appearing ones start a subscription, departing or modified ones are stopped
 * concurrently, each with a {@link #STOP_GRACE} before it is aborted. At most {@link #MAX_SUBSCRIPTIONS}
 * run, admitted in ascending publisher_id order, so fleet-authored records cannot exhaust file
 * descriptors.
 *
 * <p><b>Reloads.</b> {@code max_staleness} applies on the next freshness check; a change of
 * {@code transport} or {@code direct_allow_cidrs} restarts only the subscriptions, under the new dial
 * policy, without clearing the store (each new connection drops its own publisher's samples, as every
 * connect does). Under {@code transport: broker} without a broker connector (no event bus in this build)
 * subscriptions stay {@code pending} and a warning is logged.
 *
 * <p>A {@link Lifecycle} component: {@link #update} and {@link #follow} need it started; its
 * {@link #store()} is readable from construction. {@link #stop()} stops every subscription (each
 * within {@link #STOP_GRACE}), removes the meters and completes when the supervisor's threads have ended.
 *
 * <p>Thread-safe: {@link #update} and {@link #reconfigure} are serialized; reads never block.
 */
public interface LoadSupervisor extends Lifecycle {
    /** The cap on active subscriptions (sockets), docs/decisions.md. */
    int MAX_SUBSCRIPTIONS = 1024;
    /** How long a stopping subscription may take before it is aborted. */
    Duration STOP_GRACE = Duration.ofSeconds(5);

    static Builder builder(MeterRegistry registry) {
        return new Builder(registry);
    }

    /** The store the pickers read. */
    LoadStore store();

    /** Follows one registry generation: live workers and kv_metrics publishers. Ignored after the stop. */
    void update(LoadTargets targets);

    /** Applies a reloaded {@code dynamo.load}. */
    void reconfigure(LoadConfig config);

    /**
     * Subscribes to {@code registry}'s generation changes and applies {@link LoadTargets#from} of each new
     * snapshot (and of the current one now). Close the result to stop following.
     */
    AutoCloseable follow(DynamoRegistry registry);

    /** Running subscriptions, sorted by namespace then publisher_id (for the admin API). */
    List<SubscriptionView> subscriptions();

    /** kv_metrics publishers in the last targets, admitted or not (the admin API's {@code load_publishers}). */
    int loadPublishers();


    /** Builds a supervisor to start; everything but the meter registry has a production default. */
    final class Builder {
        final MeterRegistry meterRegistry;
        LoadConfig config = LoadConfig.DEFAULTS;
        @Nullable EventLoopGroup eventLoopGroup;
        LongSupplier ticker = System::nanoTime;
        RandomGenerator random = RandomGenerator.getDefault();
        Backoff backoff = Backoff.DEFAULT;
        ZmtpLimits limits = ZmtpLimits.KV_METRICS;
        Duration stopGrace = STOP_GRACE;
        int maxSubscriptions = MAX_SUBSCRIPTIONS;
        int maxStoreEntries = LoadStore.MAX_ENTRIES;
        Function<CidrPolicy, ZmtpConnector> directConnector = policy -> DirectTcpConnector.builder().policy(policy)
                .build();
        @Nullable Supplier<ZmtpConnector> brokerConnector;
        @Nullable NatsConnection nats;

        Builder(MeterRegistry meterRegistry) {
            this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry");
        }

        public Builder config(LoadConfig config) {
            this.config = Objects.requireNonNull(config, "config");
            return this;
        }

        /**
         * The NIO event loops subscriptions run on (shared with the app, which then shuts it down). Without
         * one, the supervisor runs its own single-threaded group and shuts it down on stop.
         */
        public Builder eventLoopGroup(EventLoopGroup group) {
            this.eventLoopGroup = Objects.requireNonNull(group, "group");
            return this;
        }

        /** The monotonic clock of sample ages and session lengths, in nanoseconds. */
        public Builder ticker(LongSupplier ticker) {
            this.ticker = Objects.requireNonNull(ticker, "ticker");
            return this;
        }

        public Builder random(RandomGenerator random) {
            this.random = Objects.requireNonNull(random, "random");
            return this;
        }

        public Builder backoff(Backoff backoff) {
            this.backoff = Objects.requireNonNull(backoff, "backoff");
            return this;
        }

        public Builder limits(ZmtpLimits limits) {
            this.limits = Objects.requireNonNull(limits, "limits");
            return this;
        }

        public Builder stopGrace(Duration grace) {
            this.stopGrace = Objects.requireNonNull(grace, "grace");
            return this;
        }

        /** Lowers the subscription cap (tests); never above {@link #MAX_SUBSCRIPTIONS}. */
        public Builder maxSubscriptions(int max) {
            if (max < 0 || max > MAX_SUBSCRIPTIONS) {
                throw new IllegalArgumentException("maxSubscriptions: " + max + " (expected: 0.." + MAX_SUBSCRIPTIONS
                        + ")");
            }
            this.maxSubscriptions = max;
            return this;
        }

        /** Lowers the store's entry cap (tests); never above {@link LoadStore#MAX_ENTRIES}. */
        public Builder maxStoreEntries(int max) {
            if (max < 1 || max > LoadStore.MAX_ENTRIES) {
                throw new IllegalArgumentException("maxStoreEntries: " + max + " (expected: 1.."
                        + LoadStore.MAX_ENTRIES + ")");
            }
            this.maxStoreEntries = max;
            return this;
        }

        /** Makes the direct connector for a dial policy (tests inject a scripted resolver or an allocator). */
        public Builder directConnector(Function<CidrPolicy, ZmtpConnector> factory) {
            this.directConnector = Objects.requireNonNull(factory, "factory");
            return this;
        }

        /** The event bus's broker connector; without one, {@code transport: broker} leaves subscriptions pending. */
        public Builder brokerConnector(Supplier<ZmtpConnector> factory) {
            this.brokerConnector = Objects.requireNonNull(factory, "factory");
            return this;
        }

        /** The shared NATS connection kv_metrics channels on the {@code Nats} transport subscribe through. */
        public Builder nats(NatsConnection connection) {
            this.nats = Objects.requireNonNull(connection, "connection");
            return this;
        }

        public LoadSupervisor build() {
            return new DefaultLoadSupervisor(this);
        }
    }
}
