package dev.continuum.router.core.config;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import dev.continuum.router.core.lifecycle.StartStopSupport;
import java.nio.charset.CharacterCodingException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds the running {@link RouterConfig} and replaces it on reload. Readers call {@link #current()},
 * a plain read of a volatile field (no lock). Reloads are serialized: each re-reads the file the
 * store started from, validates it completely, and then
 * <ul>
 *   <li>refuses an empty document (nothing but whitespace and comments) outright: it is what a file
 *       looks like between a truncate and a write, and applying it would drop every backend;</li>
 *   <li>refuses it when there is any error: every error is logged, the running config stays, the
 *       result is {@code failure};</li>
 *   <li>does nothing when nothing changed ({@code unchanged}), including when only restart-only
 *       fields changed;</li>
 *   <li>otherwise swaps it in and notifies the listeners ({@code success}), with a WARN for each
 *       change that opens the router up or empties it ({@code RelaxingChangeDetector}).</li>
 * </ul>
 * <b>Effective-config rule:</b> fields whose {@link ReloadClass} is {@code PROCESS_RESTART}
 * ({@code server.bind_address}, {@code server.socket_mode}, {@code server.workers}) keep their running
 * values in the swapped-in config, with a warning that a restart is needed, so what
 * {@link #current()} reports is always what is running.
 *
 * <p>Counts {@code continuum_config_reloads_total{result}} (success, failure, unchanged).
 * {@link #start()} watches the files and reloads on their changes; {@link #stop()} stops the
 * watcher (the store stays readable). SIGHUP and {@code POST /admin/config/reload} call
 * {@link #reload(String)}.
 */
public final class ConfigStore extends StartStopSupport {
    private static final Logger log = LoggerFactory.getLogger(ConfigStore.class);
    public static final String RELOADS_METER = "continuum.config.reloads";
    public static final Duration DEFAULT_DEBOUNCE = Duration.ofMillis(500);

    /** Ends a subscription. */
    public interface Subscription extends AutoCloseable {
        @Override
        void close();
    }

    private final ConfigLoader loader;
    private final @Nullable Path file;
    private final LoadResult startup;
    private volatile RouterConfig current;
    private final List<ConfigListener> listeners = new CopyOnWriteArrayList<>();
    private final ReentrantLock reloadLock = new ReentrantLock();
    private final Map<ReloadResult.Outcome, Counter> reloads = new EnumMap<>(ReloadResult.Outcome.class);
    private final Duration debounce;
    private final Clock clock;
    private final @Nullable TaskScheduler scheduler;
    private volatile @Nullable FileWatchReloader watcher;
    private final ConfigHistory history = new ConfigHistory();

    private ConfigStore(Builder b, LoadResult startup) {
        this.loader = b.loader;
        this.startup = startup;
        this.file = startup.source();
        this.current = startup.orThrow();
        this.debounce = b.debounce;
        this.clock = b.clock;
        this.scheduler = b.scheduler;
        for (ReloadResult.Outcome o : ReloadResult.Outcome.values()) {
            reloads.put(o, Counter.builder(RELOADS_METER)
                    .description("Config reload attempts by result")
                    .tag("result", o.label())
                    .register(b.registry));
        }
        history.add(clock.instant(), "startup", current, startupDocument());
    }

    /**
     * The bytes the startup config came from, for rolling back to it: read again, and kept only when they
     * still load to the running config (the file may have changed since the load).
     */
    private @Nullable FileRead startupDocument() {
        if (file == null) {
            return null;
        }
        FileRead read = FileRead.of(file);
        if (!read.ok()) {
            return null;
        }
        LoadResult again = loader.load(file, read);
        return again.ok() && current.equals(again.config()) ? read : null;
    }

    /** The applied versions (the running one is the newest). */
    public ConfigHistory history() {
        return history;
    }

    /**
     * Validates {@code yaml} with this store's loader (environment, overrides, Dynamo sections) and applies
     * nothing; {@code strict} turns settings without effect into errors.
     */
    public LoadResult validate(String yaml, boolean strict) {
        return loader.loadString(yaml, strict);
    }

    /**
     * Applies version {@code number} again through the reload path: its document is validated anew (against
     * today's environment and {@code api_keys_file}) and, when valid and different, swapped in as a new version
     * with trigger {@code rollback}. The file on disk is not changed, so the next file change or SIGHUP applies
     * the file again. A version no longer kept, or without a document, is a {@code failure}.
     */
    public ReloadResult rollback(int number) {
        String trigger = "rollback";
        Optional<ConfigHistory.Version> v = history.version(number);
        if (v.isEmpty()) {
            return refuseVersion(trigger, number, "a version among the last " + ConfigHistory.MAX_VERSIONS + " applied");
        }
        FileRead document = v.get().document();
        if (document == null || file == null) {
            return refuseVersion(trigger, number, "a version loaded from a config file (this one has no document)");
        }
        return reload(trigger, document);
    }

    private ReloadResult refuseVersion(String trigger, int number, String expectation) {
        Problem error = new Problem(Problem.Severity.ERROR, "", "version " + number + " (expected: " + expectation + ")");
        log.error("config rollback to version {} refused: {}", number, error);
        return finish(ReloadResult.Outcome.FAILURE, trigger, List.of(error), List.of(), ReloadPlan.empty());
    }

    public static Builder builder(ConfigLoader loader) {
        return new Builder(loader);
    }

    /** The running config. Lock-free; safe from any thread, including event loops. */
    public RouterConfig current() {
        return current;
    }

    /** The load that started the store (for its warnings at startup). */
    public LoadResult startupResult() {
        return startup;
    }

    /** The file reloads read, or null when the store started from built-in defaults. */
    public @Nullable Path file() {
        return file;
    }

    public ConfigRenderer renderer() {
        return loader.renderer();
    }

    public Subscription subscribe(ConfigListener listener) {
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    /**
     * Re-reads and applies the config; never throws for a bad file (that is a {@code failure} result).
     * The file is read twice and must give the same bytes both times: a caller (SIGHUP, the admin
     * API) says the file is complete, and a writer still at work shows up as a difference.
     */
    public ReloadResult reload(String trigger) {
        if (file == null) {
            return reload(trigger, null);
        }
        FileRead first = FileRead.of(file);
        FileRead second = FileRead.of(file);
        if (!first.equals(second)) {
            return refuse(trigger, "the same bytes on two reads; the file changed while it was read,"
                    + " reload again once the writer is done");
        }
        return reload(trigger, second);
    }

    /** Applies {@code read} (of {@link #file()}; null: read it now), or the defaults when the store has no file. */
    private ReloadResult reload(String trigger, @Nullable FileRead read) {
        reloadLock.lock();
        try {
            return reloadLocked(trigger, read);
        } finally {
            reloadLock.unlock();
        }
    }

    /** Refuses the file before validating it; {@code expectation} is the message's {@code expected:} part. */
    private ReloadResult refuse(String trigger, String expectation) {
        Problem error = new Problem(Problem.Severity.ERROR, "",
                Problems.render(String.valueOf(file)) + " (expected: " + expectation + ")");
        log.error("config reload ({}) refused; keeping the running config:\n  error: {}", trigger, error);
        return finish(ReloadResult.Outcome.FAILURE, trigger, List.of(error), List.of(), ReloadPlan.empty());
    }

    private ReloadResult reloadLocked(String trigger, @Nullable FileRead read) {
        LoadResult loaded;
        FileRead bytes = null;
        if (file == null) {
            loaded = loader.load();
        } else {
            bytes = read != null ? read : FileRead.of(file);
            if (isEmptyDocument(bytes)) {
                return refuse(trigger, "a config document; the file is empty, and an empty file is never"
                        + " applied on reload, since that is what a file caught between a truncate and a write looks like");
            }
            loaded = loader.load(file, bytes);
        }
        if (!loaded.ok()) {
            List<String> lines = loaded.report();
            log.error("config reload ({}) refused; keeping the running config:\n  {}", trigger,
                    String.join("\n  ", lines));
            return finish(ReloadResult.Outcome.FAILURE, trigger, loaded.errors(), loaded.warnings(), ReloadPlan.empty());
        }
        RouterConfig running = current;
        RouterConfig candidate = loaded.orThrow(); // ok() above: it holds a config
        ReloadPlan plan = ReloadPlanner.plan(running, candidate, loader.dynamoSections());
        List<Problem> warnings = new ArrayList<>(loaded.warnings());
        for (ReloadPlan.Change c : plan.pendingRestart()) {
            warnings.add(new Problem(Problem.Severity.WARNING, c.section(),
                    "changed; restart the process to apply it (the running value stays until then)"));
        }
        RouterConfig effective = ReloadPlanner.effective(running, candidate);
        warnings.addAll(RelaxingChangeDetector.detect(running, effective));
        warnings.forEach(w -> log.warn("config reload ({}): {}", trigger, w));
        if (effective.equals(running)) {
            return finish(ReloadResult.Outcome.UNCHANGED, trigger, List.of(), warnings, plan);
        }
        // Counted before the swap, so whoever observes the new config also sees the count.
        ReloadResult result = finish(ReloadResult.Outcome.SUCCESS, trigger, List.of(), warnings, plan);
        current = effective;
        history.add(result.at(), trigger, effective, bytes);
        log.info("config reloaded ({}): {}", trigger, plan.changes());
        for (ConfigListener listener : listeners) {
            try {
                listener.onReload(running, effective, plan);
            } catch (RuntimeException e) {
                log.error("config listener {} failed; the new config stays applied", listener, e);
            }
        }
        return result;
    }

    private static boolean isEmptyDocument(FileRead read) {
        try {
            String text = ConfigLoader.text(read);
            return text != null && EmptyDocument.isEmpty(text);
        } catch (CharacterCodingException e) {
            return false; // not empty: the loader reports the encoding error
        }
    }

    private ReloadResult finish(ReloadResult.Outcome outcome, String trigger, List<Problem> errors,
                                List<Problem> warnings, ReloadPlan plan) {
        Objects.requireNonNull(reloads.get(outcome)).increment(); // the constructor registers every outcome
        return new ReloadResult(outcome, trigger, clock.instant(), errors, warnings, plan);
    }

    /**
     * Starts watching the config file and {@code api_keys_file} (their directories), reloading with
     * trigger {@code file-watch} once the files are complete: quiet for the debounce, then the same
     * bytes on two reads one debounce apart (see {@link ReloadDebouncer}). Watches nothing when the
     * store has no file.
     */
    @Override
    protected CompletableFuture<Void> doStart() {
        Path watched = file;
        if (watched == null) {
            return CompletableFuture.completedFuture(null);
        }
        FileWatchReloader w = new FileWatchReloader(this::watchedFiles, debounce, scheduler,
                snapshot -> reload("file-watch", snapshot.get(watched)));
        watcher = w;
        return w.start();
    }

    private Set<Path> watchedFiles() {
        Set<Path> files = new LinkedHashSet<>();
        if (file != null) {
            files.add(file);
        }
        Path keys = current.apiKeys().apiKeysFile();
        if (keys != null) {
            files.add(keys);
        }
        GlobalPromptsConfig prompts = current.globalPrompts();
        if (prompts != null) {
            files.addAll(prompts.files()); // prompt files reload like the config itself
        }
        return files;
    }

    @Override
    protected String lifecycleName() {
        return "config store";
    }

    /** Stops the watcher and the reload scheduler (if any); completes when their threads have exited. */
    @Override
    protected CompletableFuture<Void> doStop() {
        FileWatchReloader w = watcher;
        watcher = null;
        return w == null ? CompletableFuture.completedFuture(null) : w.stop();
    }

    public static final class Builder {
        private final ConfigLoader loader;
        private MeterRegistry registry = new SimpleMeterRegistry();
        private Duration debounce = DEFAULT_DEBOUNCE;
        private Clock clock = Clock.systemUTC();
        private @Nullable LoadResult initial;
        private @Nullable TaskScheduler scheduler;

        private Builder(ConfigLoader loader) {
            this.loader = loader;
        }

        /** Where {@code continuum_config_reloads_total} is registered. */
        public Builder meterRegistry(MeterRegistry registry) {
            this.registry = registry;
            return this;
        }

        /**
         * The quiet period after a file event before the first read, and again between the two reads
         * that must agree (default 500ms, so a file change applies about a second later).
         */
        public Builder debounce(Duration debounce) {
            if (debounce.isNegative()) {
                throw new IllegalArgumentException("debounce: " + debounce + " (expected: >= 0)");
            }
            this.debounce = debounce;
            return this;
        }

        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /** Runs the file-watch debounce on this scheduler instead of the store's own thread (tests drive time). */
        Builder reloadScheduler(TaskScheduler scheduler) {
            this.scheduler = scheduler;
            return this;
        }

        /** Starts from this (already done) load instead of loading again. */
        public Builder initial(LoadResult result) {
            this.initial = result;
            return this;
        }

        /** Loads the config (unless given) and builds the store; throws {@link ConfigException} if it is invalid. */
        public ConfigStore build() {
            LoadResult startup = initial != null ? initial : loader.load();
            return new ConfigStore(this, startup);
        }
    }
}
