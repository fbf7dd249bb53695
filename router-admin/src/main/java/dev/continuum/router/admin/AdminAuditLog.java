package dev.continuum.router.admin;

import dev.continuum.router.core.logging.LogSafe;
import java.net.InetSocketAddress;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One line per admin call on the {@code continuum.audit} logger, so operators can route it to its
 * own appender. The line names the method, path, outcome, status and peer, never a credential or
 * a request body.
 */
public final class AdminAuditLog {
    private static final Logger AUDIT = LoggerFactory.getLogger("continuum.audit");

    private AdminAuditLog() {
    }

    public static void record(String method, String path, String principal, String outcome, int status,
                              @Nullable InetSocketAddress remote) {
        String peer = remote == null ? "unix" : remote.getAddress().getHostAddress();
        AUDIT.info("admin_call method={} path={} principal={} outcome={} status={} remote={}",
                LogSafe.escape(method), sanitize(LogSafe.escape(path)), principal, outcome, status, peer);
    }

    /**
     * What an admin call changed or checked, beside its {@code admin_call} line: {@code action} is a fixed word
     * ({@code rollback}, {@code validate}, {@code export}), {@code detail} is escaped and bounded here.
     */
    public static void action(String principal, String action, String detail) {
        AUDIT.info("admin_config principal={} action={} {}", principal, action, sanitizeDetail(LogSafe.escape(detail)));
    }

    /** Like {@link #sanitize} but keeps spaces ({@code key=value} pairs), still one bounded line. */
    static String sanitizeDetail(String detail) {
        StringBuilder out = new StringBuilder(Math.min(detail.length(), 512));
        for (int i = 0; i < detail.length() && out.length() < 512; i++) {
            char c = detail.charAt(i);
            out.append(c < 0x20 || c == 0x7f ? '_' : c);
        }
        return out.toString();
    }

    /** Paths come from clients: keep the line one line and bounded. */
    static String sanitize(String path) {
        StringBuilder out = new StringBuilder(Math.min(path.length(), 256));
        for (int i = 0; i < path.length() && out.length() < 256; i++) {
            char c = path.charAt(i);
            out.append(c < 0x20 || c == 0x7f || c == ' ' ? '_' : c);
        }
        return out.toString();
    }
}
