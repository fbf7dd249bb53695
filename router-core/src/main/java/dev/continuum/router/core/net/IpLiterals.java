package dev.continuum.router.core.net;

/**
 * Recognizes IP address and CIDR literals without DNS: {@code InetAddress.getByName} would resolve a
 * host name, and a config load must never block on (or leak queries to) a resolver.
 */
public final class IpLiterals {
    private IpLiterals() {
    }

    /** An IPv4 or IPv6 address, or either with a {@code /prefix} in range. */
    public static boolean isAddressOrCidr(String text) {
        int slash = text.indexOf('/');
        String address = slash < 0 ? text : text.substring(0, slash);
        int maxPrefix;
        if (isIpv4(address)) {
            maxPrefix = 32;
        } else if (isIpv6(address)) {
            maxPrefix = 128;
        } else {
            return false;
        }
        if (slash < 0) {
            return true;
        }
        String prefix = text.substring(slash + 1);
        if (prefix.isEmpty() || prefix.length() > 3 || !prefix.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return false;
        }
        return Integer.parseInt(prefix) <= maxPrefix;
    }

    public static boolean isIpv4(String s) {
        String[] parts = s.split("\\.", -1);
        if (parts.length != 4) {
            return false;
        }
        for (String p : parts) {
            if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(c -> c >= '0' && c <= '9')) {
                return false;
            }
            if (Integer.parseInt(p) > 255) {
                return false;
            }
        }
        return true;
    }

    /** RFC 4291 text forms: eight groups, one {@code ::}, an optional dotted IPv4 tail; no zone id. */
    public static boolean isIpv6(String s) {
        if (s.isEmpty() || s.indexOf(':') < 0) {
            return false;
        }
        int doubleColon = s.indexOf("::");
        if (doubleColon >= 0 && s.indexOf("::", doubleColon + 1) >= 0) {
            return false;
        }
        int groups = 0;
        String[] halves = doubleColon >= 0
                ? new String[] {s.substring(0, doubleColon), s.substring(doubleColon + 2)}
                : new String[] {s};
        for (int h = 0; h < halves.length; h++) {
            String half = halves[h];
            if (half.isEmpty()) {
                continue;
            }
            String[] parts = half.split(":", -1);
            for (int i = 0; i < parts.length; i++) {
                String p = parts[i];
                boolean last = h == halves.length - 1 && i == parts.length - 1;
                if (last && p.indexOf('.') >= 0) {
                    if (!isIpv4(p)) {
                        return false;
                    }
                    groups += 2;
                    continue;
                }
                if (p.isEmpty() || p.length() > 4 || !p.chars().allMatch(IpLiterals::isHex)) {
                    return false;
                }
                groups++;
            }
        }
        return doubleColon >= 0 ? groups <= 7 : groups == 8;
    }

    private static boolean isHex(int c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }
}
