package dev.continuum.router.kv.supervisor;

import dev.continuum.router.core.lifecycle.OwnedExecutor;
import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.kv.events.KvEventIngest;
import dev.continuum.router.eventplane.Backoff;
import dev.continuum.router.eventplane.ChannelDialer;
import dev.continuum.router.eventplane.ChannelFamilyView;
import dev.continuum.router.eventplane.ChannelSubscription;
import dev.continuum.router.load.LoadConfig;
import dev.continuum.router.load.LoadSupervisor;
import dev.continuum.router.load.LoadTargets;
import dev.continuum.router.eventplane.SubscriptionSet;
import dev.continuum.router.eventplane.SubscriptionState;
import dev.continuum.router.eventplane.SubscriptionView;
import dev.continuum.router.eventplane.Transport;
import dev.continuum.router.eventplane.zmtp.ZmtpConnector;
import dev.continuum.router.eventplane.zmtp.ZmtpLimits;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one {@code kv-events} subscription per publisher in the registry and feeds the KV index's
 * {@link KvEventIngest}. The subscriptions are the load supervisor's kind ({@link SubscriptionSet}): the same
 * bounded ZMTP client with {@link ZmtpLimits#KV_EVENTS} (1 MiB frames), the same cap of
 * {@link LoadSupervisor#MAX_SUBSCRIPTIONS} admitted in publisher_id order, the same backoff, stop grace and
 * dialing ({@code dynamo.load.transport} and {@code direct_allow_cidrs}), and the same following of registry
 * generations. Every generation also hands the ingest the live workers and their declared ranks.
 *
 * <pre>{@code
 * KvSupervisor kv = KvSupervisor.builder(ingest, meterRegistry).enabled(kvConfig.enabled()).load(loadConfig).build();
 * kv.start().join();
 * AutoCloseable following = kv.follow(registry);
 * kv.enabled(false);          // dynamo.kv.enabled reloaded: subscriptions stop, their ranks leave the index
 * kv.reconfigure(loadConfig); // dynamo.load reloaded: a transport change restarts the subscriptions
 * }</pre>
 *
 * <p>Reloads never touch discovery: {@code dynamo.kv.enabled} starts or stops the subscriptions, and a
 * transport change restarts them, both against the last registry generation seen.
 */
public final class KvSupervisor extends StartStopSupport implements ChannelFamilyView {
    /** The topic and the admin view's {@code family}. */
    public static final String FAMILY = PublisherTopic.KV_EVENTS.wireName();
    /** {@code continuum_dynamo_kv_subscriptions{state,transport}}. */
    public static final String SUBSCRIPTIONS = "continuum.dynamo.kv.subscriptions";
    /** {@code continuum_dynamo_kv_transport_refusals_total}: dial-policy refusals and protocol or bound violations. */
    public static final String REFUSALS = "continuum.dynamo.kv.transport.refusals";

    private static final Logger LOG = LoggerFactory.getLogger(KvSupervisor.class);

    private final KvEventIngest ingest;
    private final ChannelDialer dialer;
    private final SubscriptionSet running;
    private final @Nullable EventLoopGroup givenGroup;
    private final OwnedExecutor followExecutor = OwnedExecutor.fixed("kv-supervisor", 1);
    private final MeterRegistry registry;
    private final List<Meter> meters = new ArrayList<>();
    private final StaleSubscriptions stale;
    private @Nullable ScheduledFuture<?> staleSweep;

    private @Nullable EventLoopGroup group;
    private @Nullable ZmtpConnector connector;
    private boolean enabled;
    private LoadConfig load;
    private List<DynamoPublisher> publishers = List.of();
    private volatile int kvEventPublishers;
    private boolean stopped;

    private KvSupervisor(Builder b) {
        this.ingest = b.ingest;
        this.dialer = b.dialer;
        this.givenGroup = b.eventLoopGroup;
        this.registry = b.registry;
        this.enabled = b.enabled;
        this.load = b.load;
        Counter refusals = Counter.builder(REFUSALS)
                .description("kv-events connections refused by the dial policy, or for breaking the protocol or a bound")
                .register(registry);
        meters.add(refusals);
        this.stale = new StaleSubscriptions(ingest, b.ticker);
        this.running = new SubscriptionSet(new ChannelSubscription.Settings(FAMILY, ZmtpLimits.KV_EVENTS, b.backoff,
                b.random, b.ticker), p -> new KvEventsReceiver(p.id(), ingest, refusals, stale), b.maxSubscriptions,
                b.stopGrace);
        running.useNats(b.dialer.nats());
        for (SubscriptionState s : SubscriptionState.values()) {
            for (Transport t : Transport.values()) {
                meters.add(Gauge.builder(SUBSCRIPTIONS, () -> running.count(s, t))
                        .description("kv-events subscriptions by state and transport")
                        .tag("state", s.label()).tag("transport", t.label()).register(registry));
            }
        }
    }

    public static Builder builder(KvEventIngest ingest, MeterRegistry registry) {
        return new Builder(ingest, registry);
    }

    @Override
    protected synchronized CompletableFuture<Void> doStart() {
        EventLoopGroup g = givenGroup != null ? givenGroup
                : new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("continuum-kv-events"),
                        NioIoHandler.newFactory());
        group = g;
        followExecutor.start().join();
        connector = dialer.connectorFor(load.transport(), load.dialPolicy(), FAMILY);
        long every = StaleSubscriptions.SWEEP_EVERY.toNanos();
        staleSweep = g.next().scheduleAtFixedRate(stale::sweep, every, every, TimeUnit.NANOSECONDS);
        return CompletableFuture.completedFuture(null);
    }

    /** Runs the 60 s cut-off's sweep now (tests; it also runs every second); returns the publishers cleared. */
    int sweepStale() {
        return stale.sweep();
    }

    /**
     * Follows one registry generation: the ingest learns the live workers and their ranks, and (while enabled)
     * the subscriptions follow the generation's kv-events publishers. Ignored before the start and after the stop.
     */
    public synchronized void update(DynamoSnapshot snapshot) {
        EventLoopGroup g = group;
        if (stopped || g == null) {
            return;
        }
        LoadTargets targets = LoadTargets.from(snapshot);
        ingest.onFleet(targets.liveWorkers(), snapshot.generation());
        List<DynamoPublisher> kv = new ArrayList<>();
        if (snapshot.enabled()) {
            for (DynamoPublisher p : snapshot.publishers()) {
                if (p.topic() == PublisherTopic.KV_EVENTS) {
                    kv.add(p);
                }
            }
        }
        publishers = List.copyOf(kv);
        kvEventPublishers = publishers.size();
        if (enabled) {
            running.update(publishers, connector, load.transport(), g);
        }
    }

    /** Whether it subscribes ({@code dynamo.kv.enabled} as last applied). */
    public synchronized boolean enabled() {
        return enabled;
    }

    /** Applies a reloaded {@code dynamo.kv.enabled}: subscriptions start, or stop and leave the index. */
    public synchronized void enabled(boolean next) {
        boolean before = enabled;
        enabled = next;
        EventLoopGroup g = group;
        if (stopped || g == null || before == next) {
            return;
        }
        if (next) {
            LOG.info("dynamo.kv enabled: subscribing to {} kv-events publishers", publishers.size());
            running.update(publishers, connector, load.transport(), g);
        } else {
            LOG.info("dynamo.kv disabled: stopping {} kv-events subscriptions", running.size());
            running.departAll(g);
        }
    }

    /** Applies a reloaded {@code dynamo.load}: a transport or dial-policy change restarts the subscriptions. */
    public synchronized void reconfigure(LoadConfig next) {
        LoadConfig before = load;
        load = next;
        EventLoopGroup g = group;
        if (stopped || g == null || !before.restartsSubscriptions(next)) {
            return;
        }
        LOG.info("dynamo.load transport or direct_allow_cidrs changed: restarting {} kv-events subscriptions",
                running.size());
        running.stopAllClosing(g, connector);
        connector = dialer.connectorFor(next.transport(), next.dialPolicy(), FAMILY);
        if (enabled) {
            running.update(publishers, connector, load.transport(), g);
        }
    }

    /** Follows {@code registry}'s generations (and applies the current one now); close the result to stop. */
    public AutoCloseable follow(DynamoRegistry registry) {
        var executor = followExecutor.executor();
        DynamoRegistry.Subscription subscription = registry.subscribe(executor,
                generation -> update(registry.snapshot()));
        executor.execute(() -> update(registry.snapshot()));
        return subscription::close;
    }

    /** Running subscriptions, sorted by namespace then publisher_id (the admin view). */
    @Override
    public List<SubscriptionView> subscriptions() {
        return running.views();
    }

    /** kv-events publishers in the last registry generation, subscribed or not ({@code kv_event_publishers}). */
    @Override
    public int publishers() {
        return kvEventPublishers;
    }

    @Override
    protected synchronized CompletableFuture<Void> doStop() {
        stopped = true;
        ScheduledFuture<?> sweep = staleSweep;
        if (sweep != null) {
            sweep.cancel(false);
        }
        ZmtpConnector c = connector;
        connector = null;
        return running.shutdown(group, c, () -> meters.forEach(registry::remove), followExecutor.stop(),
                givenGroup == null ? group : null);
    }

    @Override
    protected String lifecycleName() {
        return "kv supervisor";
    }

    /** Everything but the ingest and the meter registry has a production default. */
    public static final class Builder {
        private final KvEventIngest ingest;
        private final MeterRegistry registry;
        private boolean enabled = true;
        private LoadConfig load = LoadConfig.DEFAULTS;
        private ChannelDialer dialer = ChannelDialer.DEFAULT;
        private Backoff backoff = Backoff.DEFAULT;
        private RandomGenerator random = RandomGenerator.getDefault();
        private LongSupplier ticker = System::nanoTime;
        private Duration stopGrace = LoadSupervisor.STOP_GRACE;
        private int maxSubscriptions = LoadSupervisor.MAX_SUBSCRIPTIONS;
        private @Nullable EventLoopGroup eventLoopGroup;

        private Builder(KvEventIngest ingest, MeterRegistry registry) {
            this.ingest = Objects.requireNonNull(ingest, "ingest");
            this.registry = Objects.requireNonNull(registry, "registry");
        }

        /** {@code dynamo.kv.enabled} at start (reloads go through {@link KvSupervisor#enabled}). */
        public Builder enabled(boolean enabled) {
            this.enabled = enabled;
            return this;
        }

        /** {@code dynamo.load} at start: transport and dial policy. */
        public Builder load(LoadConfig load) {
            this.load = Objects.requireNonNull(load, "load");
            return this;
        }

        public Builder dialer(ChannelDialer dialer) {
            this.dialer = Objects.requireNonNull(dialer, "dialer");
            return this;
        }

        public Builder backoff(Backoff backoff) {
            this.backoff = Objects.requireNonNull(backoff, "backoff");
            return this;
        }

        public Builder random(RandomGenerator random) {
            this.random = Objects.requireNonNull(random, "random");
            return this;
        }

        /** The monotonic clock of session lengths (the backoff floor's reset) and of the 60 s cut-off. */
        public Builder ticker(LongSupplier ticker) {
            this.ticker = Objects.requireNonNull(ticker, "ticker");
            return this;
        }

        public Builder stopGrace(Duration grace) {
            this.stopGrace = Objects.requireNonNull(grace, "grace");
            return this;
        }

        /** Lowers the subscription cap (tests); never above {@link LoadSupervisor#MAX_SUBSCRIPTIONS}. */
        public Builder maxSubscriptions(int max) {
            if (max < 0 || max > LoadSupervisor.MAX_SUBSCRIPTIONS) {
                throw new IllegalArgumentException("maxSubscriptions: " + max + " (expected: 0.."
                        + LoadSupervisor.MAX_SUBSCRIPTIONS + ")");
            }
            this.maxSubscriptions = max;
            return this;
        }

        /** The event loops subscriptions run on (the caller shuts them down); otherwise one of its own. */
        public Builder eventLoopGroup(EventLoopGroup group) {
            this.eventLoopGroup = Objects.requireNonNull(group, "group");
            return this;
        }

        public KvSupervisor build() {
            return new KvSupervisor(this);
        }
    }
}
