package dev.continuum.router.core.config;

import java.net.InetAddress;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Refuses an admin credential that is a well-known placeholder ({@code change-me} and the like) while a
 * listener is reachable beyond loopback: a sample config copied into a container or a cluster must not
 * open the admin API to anyone who read the same sample. On loopback only (a first local try) it is
 * accepted. Compared case-insensitively, ignoring {@code -}, {@code _} and spaces.
 */
final class PlaceholderSecrets {
    private static final Set<String> PLACEHOLDERS = Set.of("changeme", "changeit", "replaceme", "placeholder",
            "secret", "password", "token", "admin", "yourtoken", "mytoken", "example", "xxx", "xxxx");

    private PlaceholderSecrets() {
    }

    static boolean isPlaceholder(String value) {
        return PLACEHOLDERS.contains(value.toLowerCase(Locale.ROOT).replaceAll("[-_ ]", ""));
    }

    static void check(RouterConfig config, Problems problems) {
        AdminConfig admin = config.admin();
        if (!admin.enabled() || loopbackOnly(config.server().bindAddresses())) {
            return;
        }
        switch (admin.method()) {
            case BEARER_TOKEN -> refuse("admin.auth.token", admin.token(), problems);
            case BASIC -> refuse("admin.auth.password", admin.password(), problems);
            case API_KEY -> refuse("admin.auth.api_key", admin.apiKey(), problems);
            case NONE -> {
                // nothing to check; an open admin API is warned about where it is bound
            }
            default -> throw new AssertionError(admin.method());
        }
    }

    private static void refuse(String path, @Nullable Secret secret, Problems problems) {
        if (secret != null && isPlaceholder(secret.reveal())) {
            problems.error(path, "a placeholder value (expected: a secret of your own, for example set "
                    + "CONTINUUM_ADMIN_TOKEN; placeholders are refused while server.bind_address is reachable "
                    + "beyond loopback)");
        }
    }

    /** Unix sockets and loopback hosts only; an unresolvable host counts as reachable. */
    static boolean loopbackOnly(List<BindAddress> addresses) {
        for (BindAddress address : addresses) {
            if (address instanceof BindAddress.Tcp tcp && !loopback(tcp.host())) {
                return false;
            }
        }
        return true;
    }

    private static boolean loopback(String host) {
        if (host.equalsIgnoreCase("localhost")) {
            return true;
        }
        if (host.indexOf(':') < 0 && !host.matches("[0-9.]+")) {
            return false; // a name: never resolved here, so assume it reaches beyond this machine
        }
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }
}
