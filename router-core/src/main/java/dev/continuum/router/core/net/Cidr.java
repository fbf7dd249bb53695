package dev.continuum.router.core.net;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * An IPv4 or IPv6 network ({@code 10.0.0.0/8}, {@code fd00::/8}) or a single address. Only
 * literals are accepted: a host name is refused instead of being resolved.
 */
public final class Cidr {
    private final byte[] network;
    private final int prefixBits;

    private Cidr(byte[] network, int prefixBits) {
        this.network = network;
        this.prefixBits = prefixBits;
    }

    public static Cidr parse(String value) {
        String v = value.trim();
        int slash = v.indexOf('/');
        String addr = slash < 0 ? v : v.substring(0, slash);
        if (addr.isEmpty() || !addr.chars().allMatch(c -> Character.digit(c, 16) >= 0 || c == '.' || c == ':')) {
            throw new IllegalArgumentException("cidr: \"" + value + "\" (expected: an IP literal with optional /bits)");
        }
        byte[] bytes;
        try {
            bytes = InetAddress.getByName(addr).getAddress(); // a literal: no lookup happens
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("cidr: \"" + value + "\" (expected: an IP literal with optional /bits)");
        }
        int bits = bytes.length * 8;
        if (slash >= 0) {
            try {
                bits = Integer.parseInt(v.substring(slash + 1));
            } catch (NumberFormatException e) {
                bits = -1;
            }
            if (bits < 0 || bits > bytes.length * 8) {
                throw new IllegalArgumentException(
                        "cidr: \"" + value + "\" (expected: prefix length 0.." + bytes.length * 8 + ")");
            }
        }
        return new Cidr(bytes, bits);
    }

    public boolean contains(InetAddress address) {
        byte[] a = address.getAddress();
        if (a.length != network.length) {
            return false;
        }
        int full = prefixBits / 8;
        for (int i = 0; i < full; i++) {
            if (a[i] != network[i]) {
                return false;
            }
        }
        int rest = prefixBits % 8;
        if (rest == 0) {
            return true;
        }
        int mask = (0xFF << (8 - rest)) & 0xFF;
        return (a[full] & mask) == (network[full] & mask);
    }
}
