package dev.continuum.router.core.config;

import dev.continuum.router.core.lifecycle.StartStopSupport;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The file-watch reload path: a {@link ConfigFileWatcher} feeds a {@link ReloadDebouncer}, which runs
 * on a scheduler (a thread of its own unless one is injected) and hands each settled snapshot of the
 * watched files to {@code apply}. After each apply the watcher re-registers, since the files it
 * should watch ({@code api_keys_file}) may have changed with the config.
 */
final class FileWatchReloader extends StartStopSupport {
    static final String THREAD_NAME = "continuum-config-reload";

    private final Supplier<Set<Path>> files;
    private final Duration quiet;
    private final @Nullable TaskScheduler injected;
    private final Consumer<Map<Path, FileRead>> apply;
    private volatile @Nullable SingleThreadTaskScheduler own;
    private volatile @Nullable ConfigFileWatcher watcher;

    FileWatchReloader(Supplier<Set<Path>> files, Duration quiet, @Nullable TaskScheduler injected,
                      Consumer<Map<Path, FileRead>> apply) {
        this.files = files;
        this.quiet = quiet;
        this.injected = injected;
        this.apply = apply;
    }

    @Override
    protected CompletableFuture<Void> doStart() throws Exception {
        TaskScheduler tasks = injected;
        if (tasks == null) {
            SingleThreadTaskScheduler s = new SingleThreadTaskScheduler(THREAD_NAME);
            own = s;
            s.start().join();
            tasks = s;
        }
        ReloadDebouncer<Map<Path, FileRead>> debouncer = new ReloadDebouncer<>(tasks, quiet, this::read, this::settled);
        ConfigFileWatcher w = new ConfigFileWatcher(files, debouncer::changed);
        watcher = w;
        w.start();
        return CompletableFuture.completedFuture(null);
    }

    private Map<Path, FileRead> read() {
        Map<Path, FileRead> snapshot = new LinkedHashMap<>();
        for (Path f : files.get()) {
            snapshot.put(f, FileRead.of(f));
        }
        return snapshot;
    }

    private void settled(Map<Path, FileRead> snapshot) {
        apply.accept(snapshot);
        ConfigFileWatcher w = watcher;
        if (w != null) {
            w.register();
        }
    }

    /** Watcher first (no new events), then the scheduler (lets a reload in progress finish). */
    @Override
    protected CompletableFuture<Void> doStop() {
        ConfigFileWatcher w = watcher;
        watcher = null;
        if (w != null) {
            w.close();
        }
        SingleThreadTaskScheduler s = own;
        own = null;
        if (s != null) {
            s.stop().join();
        }
        return CompletableFuture.completedFuture(null);
    }
}
