package dev.continuum.router.eventbus;

import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.eventbus.config.KvCacheIndexConfig;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * Runs the {@code dynamo.kv_cache_index} sources that feed the {@link BackendKvIndex}: one {@link KvEventSource}
 * per configured backend, direct ones on its own event loop, bus ones through {@link EventBus}. A reload restarts
 * only the sources whose entry changed (a removed backend's blocks leave the index); the limits apply to sources
 * started afterwards. One component of the router's lifecycle stack, after the event bus it opens streams on.
 */
public final class KvCacheIndexSupervisor extends StartStopSupport {
    private final EventBus bus;
    private final BackendKvIndex index = new BackendKvIndex();
    private final KvSourceMetrics metrics;
    private final Map<String, KvEventSource> running = new HashMap<>();
    private volatile KvCacheIndexConfig config;
    private @Nullable EventLoopGroup group;

    public KvCacheIndexSupervisor(EventBus bus, MeterRegistry registry, KvCacheIndexConfig initial) {
        this.bus = bus;
        this.metrics = new KvSourceMetrics(registry, index);
        this.config = initial;
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
            KvStreamOpener opener = s.transport() == KvCacheIndexConfig.Transport.DIRECT
                    ? new DirectKvStreamOpener(g, java.util.Objects.requireNonNull(s.url()))
                    : new BusKvStreamOpener(bus);
            KvEventSource source = new KvEventSource(s, opener, bus, index, metrics, g,
                    next.maxBlocksPerBackend(), next.maxEventBytes());
            running.put(s.backend(), source);
            source.start();
        }
    }

    /** The running sources (tests and the admin view). */
    synchronized List<KvEventSource> sources() {
        return List.copyOf(running.values());
    }

    @Override
    protected synchronized CompletableFuture<Void> doStop() {
        running.values().forEach(KvEventSource::stop);
        running.clear();
        EventLoopGroup g = group;
        group = null;
        return EventLoopShutdown.of(g);
    }

    @Override
    protected String lifecycleName() {
        return "kv_cache_index sources";
    }
}
