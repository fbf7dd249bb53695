package dev.continuum.router.eventplane.zmtp;

import dev.continuum.router.core.net.Cidr;
import java.net.InetAddress;
import java.util.List;

/**
 * {@code dynamo.load.direct_allow_cidrs} as a dial policy. Unset allows every address (the historical
 * behaviour); otherwise an address must fall in one of the networks.
 */
public final class CidrPolicy {
    /** The bound on the list (docs/decisions.md). */
    public static final int MAX_CIDRS = 64;

    private static final CidrPolicy ANY = new CidrPolicy(List.of(), true);

    private final List<Cidr> networks;
    private final boolean allowAny;

    private CidrPolicy(List<Cidr> networks, boolean allowAny) {
        this.networks = networks;
        this.allowAny = allowAny;
    }

    public static CidrPolicy allowAny() {
        return ANY;
    }

    /**
     * @param cidrs IPv4/IPv6 literals with an optional prefix, already validated by the config section
     * @throws IllegalArgumentException on a value that is not a literal CIDR, or more than {@link #MAX_CIDRS}
     */
    public static CidrPolicy of(List<String> cidrs) {
        if (cidrs.size() > MAX_CIDRS) {
            throw new IllegalArgumentException("cidrs: " + cidrs.size() + " (expected: <= " + MAX_CIDRS + ")");
        }
        for (String c : cidrs) {
            if (!dev.continuum.router.core.net.IpLiterals.isAddressOrCidr(c.trim())) {
                // Checked first: Cidr.parse would hand a host-like text to the JDK resolver.
                throw new IllegalArgumentException("cidr: \"" + c + "\" (expected: an IP literal with optional /bits)");
            }
        }
        return new CidrPolicy(cidrs.stream().map(Cidr::parse).toList(), false);
    }

    public boolean allows(InetAddress address) {
        if (allowAny) {
            return true;
        }
        for (Cidr c : networks) {
            if (c.contains(address)) {
                return true;
            }
        }
        return false;
    }

    public boolean isAllowAny() {
        return allowAny;
    }
}
