package dev.continuum.router.core.config;

import dev.continuum.router.core.config.internal.TreeContext;
import dev.continuum.router.core.config.internal.TreeNode;
import dev.continuum.router.core.config.internal.YamlTrees;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Reads, interpolates, overrides, binds and validates a config, reporting every problem of the document
 * in one pass. Precedence: command line ({@link ConfigOverrides}) over environment over file over
 * defaults. The environment is injected (never read from {@code System.getenv} here) so that tests and
 * reloads see exactly the variables given. Immutable and thread-safe.
 *
 * <pre>{@code
 * ConfigLoader loader = ConfigLoader.builder()
 *         .environment(System.getenv())
 *         .overrides(ConfigOverrides.none().withConfigFile(Path.of("router.yaml")))
 *         .dynamoSection(new DiscoverySection())
 *         .build();
 * RouterConfig config = loader.load().orThrow();
 * }</pre>
 */
public final class ConfigLoader {
    private final Map<String, String> environment;
    private final ConfigOverrides overrides;
    private final ConfigSearchPath searchPath;
    private final List<DynamoSection<?>> sections;
    private final Clock clock;
    private final boolean strict;

    private ConfigLoader(Builder b) {
        this.environment = Map.copyOf(b.environment);
        this.overrides = b.overrides;
        this.searchPath = b.searchPath;
        this.sections = List.copyOf(b.sections);
        this.clock = b.clock;
        this.strict = b.strict;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Loads {@code --config} when given, else the first file of the search path, else the built-in
     * defaults (with a warning naming the places searched).
     */
    public LoadResult load() {
        Optional<Path> file = searchPath.locate(overrides.configFile());
        if (file.isPresent()) {
            return load(file.get());
        }
        List<Problem> notFound = List.of(new Problem(Problem.Severity.WARNING, "",
                "no config file found (searched " + searchPath.candidates() + "); using built-in defaults"));
        return loadDocument("", null, searchPath.workingDirectory(), notFound, "built-in defaults");
    }

    /** Loads {@code file} (with the environment and command-line overrides still applied). */
    public LoadResult load(Path file) {
        return load(file, FileRead.of(absolute(file)));
    }

    /**
     * Loads {@code file} from bytes already read: a reload validates exactly the bytes it saw twice,
     * not a third read that a writer may have changed again.
     */
    LoadResult load(Path file, FileRead read) {
        Path absolute = absolute(file);
        String name = String.valueOf(absolute.getFileName()).toLowerCase(Locale.ROOT);
        if (name.endsWith(".toml")) {
            return failed(absolute, Problems.render(file.toString())
                    + " (expected: a YAML config file; TOML is not supported in this build, convert it to YAML)");
        }
        String text;
        try {
            text = text(read);
        } catch (CharacterCodingException e) {
            return failed(absolute, Problems.render(file.toString()) + " (expected: a readable config file; "
                    + e.getClass().getSimpleName() + ")");
        }
        if (text == null) {
            return failed(absolute, Problems.render(file.toString()) + " (expected: a readable config file; "
                    + read.failure() + ")");
        }
        Path dir = absolute.getParent() == null ? searchPath.workingDirectory() : absolute.getParent();
        return loadDocument(text, absolute, dir, List.of(), String.valueOf(absolute.getFileName()));
    }

    /** The bytes as UTF-8, strictly (a stray byte is an error, not a replacement character); null when unread. */
    static @Nullable String text(FileRead read) throws CharacterCodingException {
        if (!read.ok()) {
            return null;
        }
        return StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(read.bytes()))
                .toString();
    }

    private Path absolute(Path file) {
        return searchPath.workingDirectory().resolve(file).toAbsolutePath().normalize();
    }

    /**
     * Loads YAML text that has no file (an admin import, a test). Relative paths resolve against the
     * working directory of the search path.
     */
    public LoadResult loadString(String yaml) {
        return loadString(yaml, strict);
    }

    /** As {@link #loadString(String)}, in strict mode when {@code strictMode} (or the loader is strict). */
    public LoadResult loadString(String yaml, boolean strictMode) {
        return loadDocument(yaml, null, searchPath.workingDirectory(), List.of(), "<config>", strict || strictMode);
    }

    /** The file {@link #load()} would read, if any. */
    public Optional<Path> locate() {
        return searchPath.locate(overrides.configFile());
    }

    public List<DynamoSection<?>> dynamoSections() {
        return sections;
    }

    /** The readback renderer (each section's shape comes from its bound record). */
    public ConfigRenderer renderer() {
        return ConfigRenderer.get();
    }

    private LoadResult failed(Path source, String message) {
        return new LoadResult(null, source, List.of(new Problem(Problem.Severity.ERROR, "", message)), Map.of());
    }

    /** @param sourceName how locations name the document: a file name, {@code <config>} for text */
    private LoadResult loadDocument(String text, @Nullable Path source, Path baseDir, List<Problem> before,
                                    String sourceName) {
        return loadDocument(text, source, baseDir, before, sourceName, strict);
    }

    private LoadResult loadDocument(String text, @Nullable Path source, Path baseDir, List<Problem> before,
                                    String sourceName, boolean strictMode) {
        Problems problems = new Problems();
        problems.strict(strictMode);
        before.forEach(p -> {
            if (p.severity() == Problem.Severity.ERROR) {
                problems.error(p.path(), p.message());
            } else {
                problems.warning(p.path(), p.message());
            }
        });
        TreeContext tree = new TreeContext(problems, environment);
        TreeNode root = YamlTrees.parse(text, sourceName, "", tree);
        if (root == null) {
            return new LoadResult(null, source, problems.all(), tree.locations());
        }
        EnvOverrides.apply(root, tree, environment, overrides);
        BindContext ctx = new BindContext(tree, baseDir, clock, sections);
        RouterConfig config = RouterConfigBinder.bind(root, ctx, source);
        return new LoadResult(problems.hasErrors() ? null : config, source, problems.all(), tree.locations());
    }

    public static final class Builder {
        private Map<String, String> environment = Map.of();
        private ConfigOverrides overrides = ConfigOverrides.none();
        private ConfigSearchPath searchPath = ConfigSearchPath.standard(Map.of());
        private final List<DynamoSection<?>> sections = new ArrayList<>();
        private Clock clock = Clock.systemUTC();
        private boolean strict;

        private Builder() {
        }

        /**
         * Strict mode ({@code config validate --strict}): every setting that loads without effect is an error.
         * A document can ask for it itself with {@code server.strict_config: true}.
         */
        public Builder strict(boolean on) {
            this.strict = on;
            return this;
        }

        /** The variables for {@code ${VAR}} and the env overrides; pass {@code System.getenv()} in main. */
        public Builder environment(Map<String, String> env) {
            this.environment = Map.copyOf(env);
            return this;
        }

        public Builder overrides(ConfigOverrides overrides) {
            this.overrides = overrides;
            return this;
        }

        public Builder searchPath(ConfigSearchPath searchPath) {
            this.searchPath = searchPath;
            return this;
        }

        /** Registers the owner of {@code dynamo.<section.key()>}; keys must be unique and not {@code enabled}. */
        public Builder dynamoSection(DynamoSection<?> section) {
            Set<String> keys = new HashSet<>();
            sections.forEach(s -> keys.add(s.key()));
            if (section.key().equals("enabled") || !keys.add(section.key())) {
                throw new IllegalArgumentException("dynamo section key: " + Problems.render(section.key())
                        + " (expected: unique and not \"enabled\")");
            }
            sections.add(section);
            return this;
        }

        public Builder dynamoSections(List<? extends DynamoSection<?>> all) {
            all.forEach(this::dynamoSection);
            return this;
        }

        /** Decides which API keys have expired (for the blocking-mode warning). */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        public ConfigLoader build() {
            return new ConfigLoader(this);
        }
    }
}
