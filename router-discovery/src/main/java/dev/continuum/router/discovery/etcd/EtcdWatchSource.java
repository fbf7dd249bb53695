package dev.continuum.router.discovery.etcd;

import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.DiscoveryEventKind;
import dev.continuum.router.discovery.config.EtcdConfig;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.discovery.reducer.Keyspace;
import dev.continuum.router.discovery.source.WatchSource;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Dynamo fleet in etcd. One pass: connect, range-get the three prefixes of every namespace (each at its
 * own pinned revision), watch each prefix from that revision + 1, and end the pass at the first end of any
 * watch.
 */
public final class EtcdWatchSource implements WatchSource {
    private static final Logger LOG = LoggerFactory.getLogger(EtcdWatchSource.class);

    private final EtcdConfig config;
    private final Function<EtcdConfig, EtcdReader> connector;
    private final DiscoveryCounters counters;
    private final int pageLimit;

    public EtcdWatchSource(EtcdConfig config, DiscoveryCounters counters) {
        this(config, EtcdReader::connect, counters, EtcdPrefixRange.PAGE_LIMIT);
    }

    /** With another connector (the production one closes clients on the discovery supervisor's scheduler). */
    public EtcdWatchSource(EtcdConfig config, Function<EtcdConfig, EtcdReader> connector, DiscoveryCounters counters) {
        this(config, connector, counters, EtcdPrefixRange.PAGE_LIMIT);
    }

    /** With another connector (tests) and page size. */
    public EtcdWatchSource(EtcdConfig config, Function<EtcdConfig, EtcdReader> connector, DiscoveryCounters counters,
                           int pageLimit) {
        this.config = config;
        this.connector = connector;
        this.counters = counters;
        this.pageLimit = pageLimit;
    }

    @Override
    public String describe() {
        return "etcd " + String.join(",", config.endpoints()) + " namespaces " + config.effectiveNamespaces();
    }

    @Override
    public Pass open(Duration seedTimeout) throws Exception {
        long deadline = System.nanoTime() + seedTimeout.toNanos();
        EtcdReader reader = connector.apply(config);
        try {
            List<DiscoveryEvent.Put> seed = new ArrayList<>();
            Map<String, Long> revisions = new LinkedHashMap<>();
            for (String prefix : Keyspace.prefixes(config.effectiveNamespaces())) {
                EtcdPrefixRange.Result result = EtcdPrefixRange.readAll(reader, prefix, deadline, pageLimit, key -> {
                    LOG.warn("dropped record {} (oversized): its value does not fit in one etcd response of {} bytes",
                            LogSafe.escape(key), JetcdReader.MAX_INBOUND_MESSAGE_BYTES);
                    counters.increment(DiscoveryEventKind.OVERSIZED);
                });
                for (EtcdReader.Entry entry : result.entries()) {
                    seed.add(new DiscoveryEvent.Put(entry.keyText(), entry.value()));
                }
                revisions.put(prefix, result.revision());
            }
            return new EtcdPass(reader, seed, revisions);
        } catch (Exception | Error e) {
            reader.close();
            throw e;
        }
    }

    /** One reread request; a slower etcd ends the pass (the next resync admits what waits). */
    private static final Duration REREAD_TIMEOUT = Duration.ofSeconds(5);

    private static final class EtcdPass implements Pass {
        private final EtcdReader reader;
        private final List<DiscoveryEvent.Put> seed;
        private final Map<String, Long> revisions;
        private final List<EtcdReader.WatchHandle> handles = new ArrayList<>();
        private final AtomicBoolean closed = new AtomicBoolean();

        EtcdPass(EtcdReader reader, List<DiscoveryEvent.Put> seed, Map<String, Long> revisions) {
            this.reader = reader;
            this.seed = List.copyOf(seed);
            this.revisions = revisions;
        }

        @Override
        public List<DiscoveryEvent.Put> seed() {
            return seed;
        }

        @Override
        public List<DiscoveryEvent> reread(List<String> keys) throws EtcdReadException, InterruptedException {
            List<DiscoveryEvent> current = new ArrayList<>(keys.size());
            for (String key : keys) {
                byte[] raw = key.getBytes(StandardCharsets.UTF_8);
                // The key as its own prefix: the first entry, if any, is the key itself when it exists.
                EtcdReader.RangePage page = reader.range(key, raw, 0, 1, false, REREAD_TIMEOUT);
                EtcdReader.Entry first = page.entries().isEmpty() ? null : page.entries().get(0);
                current.add(first != null && Arrays.equals(first.key(), raw)
                        ? new DiscoveryEvent.Put(key, first.value()) : new DiscoveryEvent.Delete(key));
            }
            return current;
        }

        @Override
        public void follow(PassListener listener) {
            AtomicInteger opened = new AtomicInteger();
            AtomicBoolean ended = new AtomicBoolean();
            int watches = revisions.size();
            for (Map.Entry<String, Long> prefix : revisions.entrySet()) {
                EtcdReader.WatchHandle handle = reader.watch(prefix.getKey(), prefix.getValue() + 1,
                        new EtcdReader.WatchListener() {
                            @Override
                            public void opened() {
                                if (opened.incrementAndGet() == watches) {
                                    listener.opened();
                                }
                            }

                            @Override
                            public void events(List<DiscoveryEvent> events) {
                                listener.events(events);
                            }

                            @Override
                            public void ended(EtcdReader.WatchEnd end) {
                                if (ended.compareAndSet(false, true)) {
                                    listener.ended("watch of " + prefix.getKey() + " ended: " + end.message(),
                                            end.cause());
                                }
                            }
                        });
                synchronized (handles) {
                    handles.add(handle);
                }
            }
        }

        @Override
        public void close() {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            synchronized (handles) {
                handles.forEach(EtcdReader.WatchHandle::close);
            }
            reader.close();
        }
    }
}
