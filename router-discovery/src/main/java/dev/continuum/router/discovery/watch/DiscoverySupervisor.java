package dev.continuum.router.discovery.watch;

import dev.continuum.router.core.lifecycle.Lifecycle;
import dev.continuum.router.core.lifecycle.LifecycleState;
import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.config.DiscoveryReloadPlan;
import dev.continuum.router.discovery.reducer.DiscoveryLimits;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Owns discovery's lifecycle: starts the watcher for the live settings, applies reloads without a process
 * restart (replacing the watcher only as far as the change requires, see {@link DiscoveryReloadPlan}), and stops it.
 * The {@link #registry()} exists from construction and is always readable, also while discovery is off.
 *
 * <pre>{@code
 * DiscoverySection section = DiscoverySection.create(environment);   // also registered with the ConfigLoader
 * DiscoverySupervisor discovery = DiscoverySupervisor.builder().meterRegistry(meters).build();
 * discovery.start(config.dynamo().enabled(), config.dynamo().section(section)).join();
 * DynamoRegistry registry = discovery.registry();     // hand to pickers, load and KV supervisors, admin
 * ...
 * discovery.reload(newConfig.dynamo().enabled(), newConfig.dynamo().section(section));
 * discovery.stop().join();                            // at shutdown, after the consumers
 * }</pre>
 *
 * <p>A {@link Lifecycle} component. {@link #start()} starts the watcher for the settings last given
 * (by {@link #reload} before the start, else disabled); it completes once the watcher thread runs,
 * not when the fleet is seeded. {@link #stop()} stops the watcher (within {@link #STOP_GRACE}) and
 * then releases the etcd clients still closing; the registry stays readable.
 */
public interface DiscoverySupervisor extends Lifecycle {
    /** The fixed bound on one pass's connect-and-seed phase (docs/decisions.md). */
    Duration SEED_TIMEOUT = Duration.ofSeconds(30);
    /** How long stopping a watcher may take before it is abandoned. */
    Duration STOP_GRACE = Duration.ofSeconds(5);

    static Builder builder() {
        return new Builder();
    }

    /** The fleet view; the same instance for the supervisor's lifetime. */
    DynamoRegistry registry();

    /** Remembers the initial settings and starts (nothing runs when {@code enabled} is false). Once only. */
    default CompletableFuture<Void> start(boolean enabled, DiscoveryConfig config) {
        if (state() != LifecycleState.NEW) {
            return CompletableFuture.failedFuture(new IllegalStateException("discovery already started"));
        }
        reload(enabled, config);
        return start();
    }

    /**
     * Applies new settings. Before {@link #start} they are only remembered (a reload published during startup
     * is applied by start). Returns what was done.
     */
    DiscoveryReloadPlan reload(boolean enabled, DiscoveryConfig config);

    /** Builds a supervisor; every setting has a production default. */
    final class Builder {
        private MeterRegistry meterRegistry = new SimpleMeterRegistry();
        private Clock clock = Clock.systemUTC();
        private LongSupplier nanoTime = System::nanoTime;
        private @Nullable WatchSourceFactory sourceFactory;
        private Duration seedTimeout = SEED_TIMEOUT;
        private Duration stopGrace = STOP_GRACE;
        private DiscoveryLimits limits = DiscoveryLimits.defaults();

        private Builder() {
        }

        /** Where discovery's metric families are registered. */
        public Builder meterRegistry(MeterRegistry meterRegistry) {
            this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry");
            return this;
        }

        /** Stamps {@code first_seen} and {@code last_updated}. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** Measures how long watches stayed open (the backoff reset rule). */
        public Builder nanoTime(LongSupplier nanoTime) {
            this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
            return this;
        }

        /** Replaces the production sources (which get this builder's clock and limits). */
        public Builder sourceFactory(WatchSourceFactory sourceFactory) {
            this.sourceFactory = Objects.requireNonNull(sourceFactory, "sourceFactory");
            return this;
        }

        public Builder seedTimeout(Duration seedTimeout) {
            this.seedTimeout = Objects.requireNonNull(seedTimeout, "seedTimeout");
            return this;
        }

        public Builder stopGrace(Duration stopGrace) {
            this.stopGrace = Objects.requireNonNull(stopGrace, "stopGrace");
            return this;
        }

        public Builder limits(DiscoveryLimits limits) {
            this.limits = Objects.requireNonNull(limits, "limits");
            return this;
        }

        public DiscoverySupervisor build() {
            return new WatcherSupervisor(meterRegistry, clock, nanoTime, sourceFactory, seedTimeout, stopGrace, limits);
        }
    }
}
