package dev.continuum.router.discovery.file;

import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.DiscoveryEventKind;
import dev.continuum.router.discovery.config.FileStoreConfig;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.discovery.reducer.DiscoveryLimits;
import dev.continuum.router.discovery.reducer.Keyspace;
import dev.continuum.router.discovery.source.WatchSource;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Dynamo's file store: one directory per bucket ({@code root/v1/instances}, {@code root/v1/mdc},
 * {@code root/v1/event_channels}), one file per key, named by the bucket-relative key with every byte outside
 * {@code [A-Za-z0-9]} percent-encoded. Workers write atomically ({@code .tmp_*} then rename) and touch their
 * files' mtime every TTL/3; a file whose mtime is older than the TTL belongs to a dead worker even though
 * nothing deletes it until another live Dynamo process reaps it, so the router filters on mtime itself.
 *
 * <p>Read-only: the router never creates, touches or deletes anything here (not even missing directories).
 * Changes are noticed through the directory watch (create, rename, delete), and a rescan every
 * {@code rescan_interval} sees expiry, which produces no event. A file's content is read again only when its
 * identity (inode) or size changed: keep-alive touches change only the mtime.
 */
public final class FileStoreSource implements WatchSource {
    private static final Logger LOG = LoggerFactory.getLogger(FileStoreSource.class);
    private static final AtomicInteger THREAD_IDS = new AtomicInteger();

    private final FileStoreConfig config;
    private final Clock clock;
    private final DiscoveryCounters counters;
    private final int maxRecordBytes;
    private final List<String> prefixes;

    public FileStoreSource(FileStoreConfig config) {
        this(config, Clock.systemUTC(), DiscoveryCounters.NONE, DiscoveryLimits.defaults());
    }

    public FileStoreSource(FileStoreConfig config, Clock clock, DiscoveryCounters counters, DiscoveryLimits limits) {
        this.config = config;
        this.clock = clock;
        this.counters = counters;
        this.maxRecordBytes = limits.maxRecordBytes();
        this.prefixes = Keyspace.prefixes(config.effectiveNamespaces());
    }

    @Override
    public String describe() {
        return "file store " + config.root() + " namespaces " + config.effectiveNamespaces();
    }

    @Override
    public Pass open(Duration seedTimeout) throws IOException {
        FilePass pass = new FilePass();
        pass.rescan();
        return pass;
    }

    /** What the router last saw of one live file. */
    private record Seen(@Nullable Object identity, long size, byte[] value) {
    }

    private final class FilePass implements Pass {
        /** Replaced, never mutated, after each scan: the watcher thread reads it for rereads. */
        private volatile Map<String, Seen> live = new HashMap<>();
        private final Set<String> loggedNames = new HashSet<>();
        private final AtomicBoolean closed = new AtomicBoolean();
        private final List<DiscoveryEvent.Put> seed = new ArrayList<>();
        private @Nullable WatchService watchService;
        private final Map<Keyspace, WatchKey> registered = new HashMap<>();
        private @Nullable Thread thread;
        private boolean seeded;

        @Override
        public List<DiscoveryEvent.Put> seed() {
            return seed;
        }

        /** From the last scan: what the pass has reported or is about to report, never older. */
        @Override
        public List<DiscoveryEvent> reread(List<String> keys) {
            Map<String, Seen> scanned = live;
            List<DiscoveryEvent> current = new ArrayList<>(keys.size());
            for (String key : keys) {
                Seen seen = scanned.get(key);
                current.add(seen == null ? new DiscoveryEvent.Delete(key) : new DiscoveryEvent.Put(key, seen.value()));
            }
            return current;
        }

        @Override
        public void follow(PassListener listener) {
            thread = new Thread(() -> run(listener), "dynamo-file-store-" + THREAD_IDS.incrementAndGet());
            thread.setDaemon(true);
            thread.start();
        }

        private void run(PassListener listener) {
            try (WatchService service = config.root().getFileSystem().newWatchService()) {
                watchService = service;
                registerDirectories();
                listener.opened();
                long rescanMillis = Math.max(1, config.rescanInterval().toMillis());
                long nextRescan = System.nanoTime();
                while (!closed.get()) {
                    long wait = Math.max(0, nextRescan - System.nanoTime());
                    WatchKey key = service.poll(wait, TimeUnit.NANOSECONDS);
                    if (key != null) {
                        // Drain every pending key: one rescan answers them all.
                        do {
                            key.pollEvents();
                            if (!key.reset()) {
                                registered.values().remove(key);
                            }
                        } while ((key = service.poll()) != null);
                    } else {
                        nextRescan = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(rescanMillis);
                    }
                    registerDirectories();
                    List<DiscoveryEvent> changes = rescan();
                    if (!changes.isEmpty()) {
                        listener.events(changes);
                    }
                }
                listener.ended("file store pass closed", null);
            } catch (ClosedWatchServiceException e) {
                listener.ended("file store watch closed", null);
            } catch (InterruptedException e) {
                listener.ended("file store watch interrupted", null);
            } catch (IOException | RuntimeException e) {
                listener.ended("file store unreadable", e);
            }
        }

        /** Registers bucket directories that exist now (Dynamo creates them when its first worker starts). */
        private void registerDirectories() throws IOException {
            WatchService service = watchService;
            if (service == null) {
                return;
            }
            for (Keyspace keyspace : Keyspace.values()) {
                if (registered.containsKey(keyspace)) {
                    continue;
                }
                Path dir = config.root().resolve(keyspace.bucket());
                if (Files.isDirectory(dir)) {
                    registered.put(keyspace, dir.register(service, StandardWatchEventKinds.ENTRY_CREATE,
                            StandardWatchEventKinds.ENTRY_DELETE));
                }
            }
        }

        /**
         * Lists the three buckets and returns what changed since the last scan (the first scan is the pass's first
         * listing).
         */
        List<DiscoveryEvent> rescan() throws IOException {
            Instant oldest = clock.instant().minus(config.ttl());
            Map<String, Seen> now = new HashMap<>();
            for (Keyspace keyspace : Keyspace.values()) {
                Path dir = config.root().resolve(keyspace.bucket());
                try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
                    for (Path file : files) {
                        scanFile(keyspace, file, oldest, now);
                    }
                } catch (NoSuchFileException | NotDirectoryException e) {
                    // No worker has registered in this bucket yet.
                }
            }
            List<DiscoveryEvent> changes = new ArrayList<>();
            for (Map.Entry<String, Seen> entry : now.entrySet()) {
                Seen before = live.get(entry.getKey());
                if (before == null || !Arrays.equals(before.value(), entry.getValue().value())) {
                    changes.add(new DiscoveryEvent.Put(entry.getKey(), entry.getValue().value()));
                }
            }
            for (String key : live.keySet()) {
                if (!now.containsKey(key)) {
                    changes.add(new DiscoveryEvent.Delete(key));
                }
            }
            live = now;
            if (!seeded) {
                seeded = true;
                for (DiscoveryEvent change : changes) {
                    if (change instanceof DiscoveryEvent.Put put) {
                        seed.add(put);
                    }
                }
                return List.of();
            }
            return changes;
        }

        private void scanFile(Keyspace keyspace, Path file, Instant oldest, Map<String, Seen> now) throws IOException {
            String name = file.getFileName().toString();
            if (name.startsWith(".tmp_")) {
                return;
            }
            String relative = Keyspace.decodeSegment(name).orElse(null);
            if (relative == null) {
                if (loggedNames.add(name) && loggedNames.size() < 4096) {
                    LOG.warn("ignoring file store entry {}: not a percent-encoded key", LogSafe.escape(file));
                }
                return;
            }
            String key = keyspace.bucket() + "/" + relative;
            if (prefixes.stream().noneMatch(key::startsWith)) {
                return;
            }
            BasicFileAttributes attributes;
            try {
                attributes = Files.readAttributes(file, BasicFileAttributes.class);
            } catch (NoSuchFileException e) {
                return;
            }
            if (!attributes.isRegularFile() || attributes.lastModifiedTime().toInstant().isBefore(oldest)) {
                return;
            }
            if (attributes.size() > maxRecordBytes) {
                if (loggedNames.add(name)) {
                    LOG.warn("dropped record {} (oversized): {} bytes exceeds MAX_RECORD_BYTES ({})",
                            LogSafe.escape(key),
                            attributes.size(), maxRecordBytes);
                    counters.increment(DiscoveryEventKind.OVERSIZED);
                }
                return;
            }
            Seen before = live.get(key);
            if (before != null && Objects.equals(before.identity(), attributes.fileKey())
                    && before.size() == attributes.size()) {
                now.put(key, before);
                return;
            }
            byte[] value;
            try {
                value = Files.readAllBytes(file);
            } catch (NoSuchFileException e) {
                return;
            }
            if (value.length > maxRecordBytes) {
                return;
            }
            now.put(key, new Seen(attributes.fileKey(), attributes.size(), value));
        }

        @Override
        public void close() {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            WatchService service = watchService;
            if (service != null) {
                try {
                    service.close();
                } catch (IOException e) {
                    LOG.debug("closing the file store watch", e);
                }
            }
            Thread running = thread;
            if (running != null) {
                running.interrupt();
            }
        }
    }
}
