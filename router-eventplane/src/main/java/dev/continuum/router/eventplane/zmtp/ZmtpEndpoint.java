package dev.continuum.router.eventplane.zmtp;

import java.util.Objects;
import java.util.Optional;

/**
 * A publisher's {@code tcp://host:port} endpoint, parsed without any DNS lookup. The host is kept as
 * written (an IP literal or a name, IPv6 without brackets); {@link #toString()} never prints it, because
 * internal addresses must not reach logs that leave the cluster.
 */
public record ZmtpEndpoint(String host, int port) {
    private static final String SCHEME = "tcp://";

    public ZmtpEndpoint {
        Objects.requireNonNull(host, "host");
        if (host.isEmpty() || port < 1 || port > 65_535) {
            throw new IllegalArgumentException("endpoint (expected: tcp://host:port with port 1..65535)");
        }
    }

    /** Parses {@code tcp://10.0.0.7:41000}, {@code tcp://worker-0.dynamo:41000} or {@code tcp://[fd00::7]:41000}. */
    public static Optional<ZmtpEndpoint> parse(String address) {
        if (!address.startsWith(SCHEME)) {
            return Optional.empty();
        }
        String rest = address.substring(SCHEME.length());
        String host;
        String port;
        if (rest.startsWith("[")) {
            int close = rest.indexOf(']');
            if (close < 0 || close + 1 >= rest.length() || rest.charAt(close + 1) != ':') {
                return Optional.empty();
            }
            host = rest.substring(1, close);
            port = rest.substring(close + 2);
        } else {
            int colon = rest.lastIndexOf(':');
            if (colon < 0 || rest.indexOf(':') != colon) {
                return Optional.empty();
            }
            host = rest.substring(0, colon);
            port = rest.substring(colon + 1);
        }
        if (host.isEmpty() || port.isEmpty() || port.length() > 5
                || !port.chars().allMatch(ch -> ch >= '0' && ch <= '9')
                || !host.chars().allMatch(ch -> ch > ' ' && ch < 0x7F && ch != '/' && ch != '@')) {
            return Optional.empty();
        }
        int p = Integer.parseInt(port);
        if (p < 1 || p > 65_535) {
            return Optional.empty();
        }
        return Optional.of(new ZmtpEndpoint(host, p));
    }

    @Override
    public String toString() {
        return "ZmtpEndpoint[redacted]";
    }
}
