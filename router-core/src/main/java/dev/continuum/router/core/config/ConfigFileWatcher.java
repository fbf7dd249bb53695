package dev.continuum.router.core.config;

import static java.nio.file.StandardWatchEventKinds.ENTRY_CREATE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_DELETE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_MODIFY;
import static java.nio.file.StandardWatchEventKinds.OVERFLOW;

import dev.continuum.router.core.lifecycle.StartStopSupport;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the DIRECTORIES of the config file and of {@code api_keys_file}, not the files: editors save
 * by writing a temporary file and renaming it over the old one, and Kubernetes swaps a ConfigMap by
 * renaming the {@code ..data} symlink, and a watch on the old file's inode would see neither.
 * Events for the watched names (or {@code ..data}) start a quiet period of {@code debounce}; each new
 * event restarts it, and when it ends one reload runs. So a burst of writes gives one reload, and a
 * half-written file is not read while the writer is still busy.
 *
 * <p>A lifecycle component: start opens the watch service (the JDK runs a thread of its own behind
 * it) and starts one daemon thread; stop closes the service, and its future completes when that
 * thread has exited.
 */
final class ConfigFileWatcher extends StartStopSupport {
    private static final Logger log = LoggerFactory.getLogger(ConfigFileWatcher.class);
    /** The name Kubernetes gives the symlink it swaps on every ConfigMap update. */
    static final String KUBERNETES_DATA_LINK = "..data";

    private @Nullable WatchService service;
    private final Supplier<Set<Path>> files;
    private final long debounceNanos;
    private final Runnable onChange;
    private final Map<WatchKey, Path> dirsByKey = new HashMap<>();
    private final Map<Path, WatchKey> keysByDir = new HashMap<>();
    private volatile Map<Path, Set<String>> namesByDir = Map.of();
    private final Thread thread;
    private final CompletableFuture<Void> exited = new CompletableFuture<>();
    private volatile boolean closed;

    ConfigFileWatcher(Supplier<Set<Path>> files, Duration debounce, Runnable onChange) {
        this.files = files;
        this.debounceNanos = debounce.toNanos();
        this.onChange = onChange;
        this.thread = new Thread(this::run, "continuum-config-watcher");
        this.thread.setDaemon(true);
    }

    @Override
    protected CompletableFuture<Void> doStart() throws IOException {
        WatchService opened = FileSystems.getDefault().newWatchService();
        service = opened;
        register(opened);
        thread.start();
        return CompletableFuture.completedFuture(null);
    }

    /** (Re)registers the directories of the current files; called again after each reload. */
    private void register(WatchService service) {
        Map<Path, Set<String>> wanted = new HashMap<>();
        for (Path file : files.get()) {
            addFile(wanted, file.toAbsolutePath().normalize());
            try {
                // A file that is a symlink into another directory changes there too.
                addFile(wanted, file.toRealPath());
            } catch (IOException missing) {
                // Not there right now (being replaced); its directory is already watched.
            }
        }
        for (Path dir : wanted.keySet()) {
            if (!keysByDir.containsKey(dir) && Files.isDirectory(dir)) {
                try {
                    WatchKey key = dir.register(service, ENTRY_CREATE, ENTRY_MODIFY, ENTRY_DELETE);
                    keysByDir.put(dir, key);
                    dirsByKey.put(key, dir);
                } catch (IOException | ClosedWatchServiceException e) {
                    log.warn("cannot watch {} for config changes: {}", dir, e.toString());
                }
            }
        }
        for (Path dir : new HashSet<>(keysByDir.keySet())) {
            if (!wanted.containsKey(dir)) {
                WatchKey key = keysByDir.remove(dir);
                dirsByKey.remove(key);
                key.cancel();
            }
        }
        namesByDir = Map.copyOf(wanted);
    }

    private static void addFile(Map<Path, Set<String>> wanted, Path file) {
        Path dir = file.getParent();
        if (dir != null && file.getFileName() != null) {
            wanted.computeIfAbsent(dir, d -> new HashSet<>()).add(file.getFileName().toString());
        }
    }

    private void run() {
        WatchService service = this.service;
        if (service == null) {
            exited.complete(null);
            return;
        }
        long deadline = 0;
        boolean pending = false;
        try {
            while (!closed) {
                WatchKey key;
                if (pending) {
                    long wait = deadline - System.nanoTime();
                    key = wait > 0 ? service.poll(wait, TimeUnit.NANOSECONDS) : null;
                } else {
                    key = service.take();
                }
                if (key != null) {
                    if (relevant(key)) {
                        pending = true;
                        deadline = System.nanoTime() + debounceNanos;
                    }
                    if (!key.reset()) {
                        Path dir = dirsByKey.remove(key);
                        if (dir != null) {
                            keysByDir.remove(dir);
                        }
                    }
                    continue;
                }
                if (pending && System.nanoTime() - deadline >= 0) {
                    pending = false;
                    try {
                        onChange.run();
                    } catch (RuntimeException e) {
                        log.error("config reload after a file change failed", e);
                    }
                    register(service);
                }
            }
        } catch (ClosedWatchServiceException | InterruptedException stopped) {
            // stop() was called
        } finally {
            exited.complete(null);
        }
    }

    private boolean relevant(WatchKey key) {
        Path dir = dirsByKey.get(key);
        Set<String> names = dir == null ? Set.of() : namesByDir.getOrDefault(dir, Set.of());
        boolean relevant = false;
        for (WatchEvent<?> event : key.pollEvents()) {
            if (event.kind() == OVERFLOW) {
                relevant = true;
                continue;
            }
            Object context = event.context();
            String name = context instanceof Path p ? p.toString() : "";
            if (names.contains(name) || name.equals(KUBERNETES_DATA_LINK)) {
                relevant = true;
            }
        }
        return relevant;
    }

    @Override
    protected String lifecycleName() {
        return "config file watcher";
    }

    @Override
    protected CompletableFuture<Void> doStop() {
        closed = true;
        WatchService s = service;
        if (s != null) {
            try {
                // Wakes the thread out of take()/poll() with ClosedWatchServiceException.
                s.close();
            } catch (IOException e) {
                log.debug("closing the config watch service", e);
            }
        }
        return thread.isAlive() ? exited : CompletableFuture.completedFuture(null);
    }
}
