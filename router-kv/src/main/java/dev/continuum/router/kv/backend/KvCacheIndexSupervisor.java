package dev.continuum.router.kv.backend;

import dev.continuum.router.eventbus.EventBus;
import dev.continuum.router.eventbus.EventLoopShutdown;
import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.eventplane.zmtp.CidrPolicy;
import dev.continuum.router.eventplane.zmtp.DirectTcpConnector;
import dev.continuum.router.eventplane.zmtp.ZmtpConnector;
import dev.continuum.router.kv.backend.config.KvCacheIndexConfig;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the {@code dynamo.kv_cache_index} sources that feed the {@link BackendKvIndex}: one {@link KvEventSource}
 * per configured backend, direct ones on its own event loop, bus ones through {@link EventBus}; a {@code zmq}
 * source is an {@link EngineKvEventSource} on the same loop, dialling through one {@link DirectTcpConnector}. A
 * reload restarts only the sources whose entry changed (a removed backend's blocks leave the index); the limits
 * apply to sources started afterwards. One component of the router's lifecycle stack, after the event bus it
 * opens streams on.
 */
public final class KvCacheIndexSupervisor extends StartStopSupport {
    private static final Logger LOG = LoggerFactory.getLogger(KvCacheIndexSupervisor.class);
    private final EventBus bus;
    private final BackendKvIndex index = new BackendKvIndex();
    private final KvSourceMetrics metrics;
    private final Clock clock;
    private final EngineKvMetrics engineMetrics;
    private final Map<String, KvIndexSource> running = new HashMap<>();
    /** The running sources in configuration order, replaced whole on each change: the admin view reads it unlocked. */
    private volatile List<KvIndexSource> published = List.of();
    private @Nullable ZmtpConnector connector;
    private volatile KvCacheIndexConfig config;
    private @Nullable EventLoopGroup group;

    public KvCacheIndexSupervisor(EventBus bus, MeterRegistry registry, KvCacheIndexConfig initial) {
        this(bus, registry, initial, Clock.systemUTC());
    }

    /** @param clock the wall clock of the admin view's {@code last_event_at} and {@code last_error_at} */
    public KvCacheIndexSupervisor(EventBus bus, MeterRegistry registry, KvCacheIndexConfig initial,
                                  Clock clock) {
        this.bus = bus;
        this.metrics = new KvSourceMetrics(registry, index);
        this.engineMetrics = new EngineKvMetrics(registry);
        this.config = initial;
        this.clock = clock;
    }

    /**
     * {@code kv_cache_index_sources} of {@code GET /admin/dynamo/workers}: one row per running source, in
     * configuration order. Reads immutable snapshots and volatile fields only, so it never waits for a reload.
     */
    public List<KvSourceView> views() {
        List<KvIndexSource> sources = published;
        List<KvSourceView> rows = new ArrayList<>(sources.size());
        for (KvIndexSource source : sources) {
            rows.add(source.view());
        }
        return rows;
    }

    /**
     * {@link #views()} as the admin JSON rows, each with the engine's {@code block_size} (what its stored events
     * said; null for SSE sources and before the first), which selection compares with the model's.
     */
    public List<Map<String, Object>> adminView() {
        return views().stream().map(v -> {
            Map<String, Object> row = v.toJson();
            int size = index.blockSize(v.backend());
            row.put("block_size", size == 0 ? null : size);
            return row;
        }).toList();
    }

    /** The index its sources feed (readers take no lock). */
    public BackendKvIndex index() {
        return index;
    }

    @Override
    protected synchronized CompletableFuture<Void> doStart() {
        group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("continuum-kv-sources", true),
                NioIoHandler.newFactory());
        apply(config);
        return CompletableFuture.completedFuture(null);
    }

    /** Applies a reloaded section: new sources start, changed ones restart, removed ones stop. */
    public synchronized void reload(KvCacheIndexConfig next) {
        config = next;
        if (group != null) {
            apply(next);
        }
    }

    private void apply(KvCacheIndexConfig next) {
        Map<String, KvCacheIndexConfig.Source> wanted = new HashMap<>();
        for (KvCacheIndexConfig.Source s : next.sources()) {
            wanted.put(s.backend(), s);
        }
        for (var it = running.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            if (!e.getValue().source().equals(wanted.get(e.getKey()))) {
                e.getValue().stop();
                it.remove();
            }
        }
        EventLoopGroup g = java.util.Objects.requireNonNull(group);
        for (KvCacheIndexConfig.Source s : next.sources()) {
            if (running.containsKey(s.backend())) {
                continue;
            }
            if (s.transport() == KvCacheIndexConfig.Transport.ZMQ) {
                // The endpoints come from the operator's own file, not from discovery: any address may be dialled.
                ZmtpConnector c = connector;
                if (c == null) {
                    c = DirectTcpConnector.builder().policy(CidrPolicy.allowAny()).build();
                    connector = c;
                }
                EngineKvEventSource engine = new EngineKvEventSource(s, c, g.next(), index, metrics, engineMetrics,
                        next.maxBlocksPerBackend(), next.maxEventBytes(), clock, EngineKvEventSource.REPLAY_TIMEOUT);
                running.put(s.backend(), engine);
                engine.start();
                continue;
            }
            KvStreamOpener opener;
            try {
                opener = s.transport() == KvCacheIndexConfig.Transport.DIRECT
                        ? new DirectKvStreamOpener(g, s) : new BusKvStreamOpener(bus);
            } catch (IllegalStateException e) {
                // The TLS context could not be built from a CA bundle that validated: leave that source out.
                LOG.error("kv_cache_index source {}: not started: {}", LogSafe.escape(s.backend()),
                        LogSafe.escape(String.valueOf(e.getMessage())));
                continue;
            }
            KvEventSource source = new KvEventSource(s, opener, bus, index, metrics, g,
                    next.maxBlocksPerBackend(), next.maxEventBytes(), clock);
            running.put(s.backend(), source);
            source.start();
        }
        publish(next);
    }

    private void publish(KvCacheIndexConfig next) {
        List<KvIndexSource> ordered = new ArrayList<>();
        for (KvCacheIndexConfig.Source s : next.sources()) {
            KvIndexSource source = running.get(s.backend());
            if (source != null) {
                ordered.add(source);
            }
        }
        published = List.copyOf(ordered);
    }

    /** The running SSE sources (tests and the admin view). */
    public synchronized List<KvEventSource> sources() {
        return running.values().stream().filter(KvEventSource.class::isInstance).map(KvEventSource.class::cast)
                .toList();
    }

    /** The running {@code transport: zmq} sources. */
    public synchronized List<EngineKvEventSource> engineSources() {
        return running.values().stream().filter(EngineKvEventSource.class::isInstance)
                .map(EngineKvEventSource.class::cast).toList();
    }

    @Override
    protected synchronized CompletableFuture<Void> doStop() {
        running.values().forEach(KvIndexSource::stop);
        running.clear();
        published = List.of();
        ZmtpConnector c = connector;
        connector = null;
        if (c != null) {
            c.close();
        }
        EventLoopGroup g = group;
        group = null;
        return EventLoopShutdown.of(g);
    }

    @Override
    protected String lifecycleName() {
        return "kv_cache_index sources";
    }
}
