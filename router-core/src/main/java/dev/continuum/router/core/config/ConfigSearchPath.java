package dev.continuum.router.core.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Where a config file is looked for when {@code --config} is not given, in the Rust router's newer
 * order: the working directory, then the user's, then the system's. In each directory
 * {@code config.yaml}, {@code config.yml}, then {@code config.toml} (found, it is refused: this build
 * reads YAML only). Injectable so tests can use temporary directories.
 *
 * @param workingDirectory also the base of a relative {@code --config}
 * @param homeDirectory    the user's home; its {@code .config/continuum-router} is searched
 * @param systemDirectory  usually {@code /etc/continuum-router}
 */
public record ConfigSearchPath(Path workingDirectory, Path homeDirectory, Path systemDirectory) {
    public static final List<String> FILE_NAMES = List.of("config.yaml", "config.yml", "config.toml");

    /** The process's directories; the home directory is {@code $HOME} when set ({@link HomeDirectory}). */
    public static ConfigSearchPath standard(Map<String, String> environment) {
        return new ConfigSearchPath(Path.of(System.getProperty("user.dir")), HomeDirectory.of(environment),
                Path.of("/etc/continuum-router"));
    }

    /** Every file tried, in order. */
    public List<Path> candidates() {
        List<Path> out = new ArrayList<>();
        for (Path dir : List.of(workingDirectory, homeDirectory.resolve(".config").resolve("continuum-router"),
                systemDirectory)) {
            for (String name : FILE_NAMES) {
                out.add(dir.resolve(name));
            }
        }
        return out;
    }

    /** The first candidate that exists as a regular file (symlinks followed). */
    public Optional<Path> find() {
        return candidates().stream().filter(Files::isRegularFile).findFirst();
    }

    /**
     * {@code explicit} (a leading {@code ~} is the home directory, a relative path resolves against the
     * working directory) when given, else the first candidate found.
     */
    public Optional<Path> locate(@Nullable Path explicit) {
        if (explicit != null) {
            Path expanded = Path.of(HomeDirectory.expand(explicit.toString(), homeDirectory));
            return Optional.of(workingDirectory.resolve(expanded).normalize());
        }
        return find();
    }
}
