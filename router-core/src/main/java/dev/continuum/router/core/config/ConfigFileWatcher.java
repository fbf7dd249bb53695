package dev.continuum.router.core.config;

import static java.nio.file.StandardWatchEventKinds.ENTRY_CREATE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_DELETE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_MODIFY;
import static java.nio.file.StandardWatchEventKinds.OVERFLOW;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the DIRECTORIES of the config file and of {@code api_keys_file}, not the files: editors save
 * by writing a temporary file and renaming it over the old one, and Kubernetes swaps a ConfigMap by
 * renaming the {@code ..data} symlink, and a watch on the old file's inode would see neither.
 * Each batch of events for the watched names (or {@code ..data}) calls {@code onChange}, which must
 * not block: deciding when the files are complete is the {@link ReloadDebouncer}'s job. One daemon
 * thread, stopped by close().
 */
final class ConfigFileWatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ConfigFileWatcher.class);
    /** The name Kubernetes gives the symlink it swaps on every ConfigMap update. */
    static final String KUBERNETES_DATA_LINK = "..data";

    private final WatchService service;
    private final Supplier<Set<Path>> files;
    private final Runnable onChange;
    private final Map<WatchKey, Path> dirsByKey = new HashMap<>();
    private final Map<Path, WatchKey> keysByDir = new HashMap<>();
    private volatile Map<Path, Set<String>> namesByDir = Map.of();
    private final Thread thread;
    private volatile boolean closed;

    ConfigFileWatcher(Supplier<Set<Path>> files, Runnable onChange) throws IOException {
        this.service = FileSystems.getDefault().newWatchService();
        this.files = files;
        this.onChange = onChange;
        register();
        this.thread = new Thread(this::run, "continuum-config-watcher");
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /**
     * (Re)registers the directories of the current files: after each event batch (a symlink may now
     * point elsewhere) and, from the reload thread, after each reload ({@code api_keys_file} may have moved).
     */
    synchronized void register() {
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
                if (key != null) {
                    dirsByKey.remove(key);
                    key.cancel();
                }
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
        try {
            while (!closed) {
                WatchKey key = service.take();
                boolean relevant;
                synchronized (this) {
                    relevant = relevant(key);
                    if (!key.reset()) {
                        Path dir = dirsByKey.remove(key);
                        if (dir != null) {
                            keysByDir.remove(dir);
                        }
                    }
                }
                if (relevant) {
                    onChange.run();
                    register();
                }
            }
        } catch (ClosedWatchServiceException | InterruptedException stopped) {
            // close() was called
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
    public void close() {
        closed = true;
        try {
            service.close();
        } catch (IOException e) {
            log.debug("closing the config watch service", e);
        }
        if (Thread.currentThread() != thread) {
            try {
                thread.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
