package dev.continuum.router.discovery.config;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The form of one etcd endpoint: {@code http(s)://host:port} or a bare {@code host:port} (IPv6 in brackets,
 * {@code [::1]:2379}), which normalizes to {@code http://}. Nothing else may ride along: no credentials (they
 * belong in {@code auth}, never in a URL that is logged), no query, no fragment, no path, not even an empty
 * trailing {@code ?}, {@code #} or {@code /}.
 */
final class EtcdEndpoints {
    private static final Pattern HOST_NAME = Pattern.compile("[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?");
    private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]+");

    private EtcdEndpoints() {
    }

    /** A normalized endpoint, or the expectation it fails (the message's {@code expected:} part). */
    sealed interface Result {
    }

    record Valid(String url) implements Result {
        boolean https() {
            return url.startsWith("https://");
        }
    }

    record Invalid(String expectation) implements Result {
    }

    /** {@code http://user:pw@host:2379} as {@code http://****@host:2379}, for messages; anything else as given. */
    static String maskUserInfo(String text) {
        int start = text.indexOf("://");
        start = start < 0 ? 0 : start + 3;
        int end = firstOf(text.substring(start), "/?#");
        int at = text.lastIndexOf('@', end < 0 ? text.length() - 1 : start + end - 1);
        return at < start ? text : text.substring(0, start) + "****" + text.substring(at);
    }

    static Result parse(String text) {
        if (text.isEmpty() || text.chars().anyMatch(c -> Character.isWhitespace(c) || Character.isISOControl(c))) {
            return new Invalid("an http(s)://host:port URL or host:port, without spaces");
        }
        String scheme = "http";
        String rest = text;
        int separator = text.indexOf("://");
        if (separator >= 0) {
            scheme = text.substring(0, separator).toLowerCase(Locale.ROOT);
            rest = text.substring(separator + 3);
            if (!scheme.equals("http") && !scheme.equals("https")) {
                return new Invalid("an http:// or https:// URL");
            }
        }
        int authorityEnd = firstOf(rest, "/?#");
        String authority = authorityEnd < 0 ? rest : rest.substring(0, authorityEnd);
        if (authority.contains("@")) {
            return new Invalid("no credentials in the URL");
        }
        if (authorityEnd >= 0) {
            return switch (rest.charAt(authorityEnd)) {
                case '?' -> new Invalid("no query string in the URL");
                case '#' -> new Invalid("no fragment in the URL");
                default -> new Invalid("no path in the URL");
            };
        }
        String host;
        String port;
        if (authority.startsWith("[")) {
            int close = authority.indexOf(']');
            if (close < 0 || close + 1 >= authority.length() || authority.charAt(close + 1) != ':') {
                return new Invalid("host:port with a port, IPv6 as [::1]:2379");
            }
            host = authority.substring(1, close);
            port = authority.substring(close + 2);
            if (!IPV6.matcher(host).matches() || !host.contains(":")) {
                return new Invalid("an IPv6 address in brackets, like [::1]:2379");
            }
        } else {
            int colon = authority.lastIndexOf(':');
            if (colon < 0) {
                return new Invalid("host:port with a port");
            }
            if (authority.indexOf(':') != colon) {
                return new Invalid("an IPv6 address in brackets, like [::1]:2379");
            }
            host = authority.substring(0, colon);
            port = authority.substring(colon + 1);
            if (!HOST_NAME.matcher(host).matches()) {
                return new Invalid("a host name or IP address before the port");
            }
        }
        if (port.isEmpty() || port.length() > 5 || !port.chars().allMatch(Character::isDigit)
                || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65_535) {
            return new Invalid("a port in 1..65535");
        }
        return new Valid(scheme + "://" + authority);
    }

    private static int firstOf(String text, String characters) {
        int first = -1;
        for (char c : characters.toCharArray()) {
            int at = text.indexOf(c);
            if (at >= 0 && (first < 0 || at < first)) {
                first = at;
            }
        }
        return first;
    }
}
