package dev.continuum.router.core.config;

import java.nio.file.Path;
import java.util.Map;

/**
 * {@code ~} in config paths and in the search path: the home directory is {@code $HOME} of the load's
 * environment (as a shell would expand it), else the JVM's {@code user.home} (which ignores {@code $HOME}).
 * Only a leading {@code ~} alone or followed by {@code /} is expanded; {@code ~user} is left as written.
 */
public final class HomeDirectory {
    private HomeDirectory() {
    }

    public static Path of(Map<String, String> environment) {
        String home = environment.get("HOME");
        return Path.of(home != null && !home.isEmpty() ? home : System.getProperty("user.home"));
    }

    /** {@code text} with a leading {@code ~} or {@code ~/} replaced by {@code home}. */
    public static String expand(String text, Path home) {
        if (text.equals("~")) {
            return home.toString();
        }
        if (text.startsWith("~/")) {
            return home.resolve(text.substring(2)).toString();
        }
        return text;
    }
}
