package dev.continuum.router.eventbus;

import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * What a verified client certificate can claim: its DNS subject alternative names, and the CA generation
 * whose trust store verified it. Wildcard and non-lowercase names are dropped here, so they can never match
 * a broker id.
 *
 * @param dnsNames     exact lowercase DNS SANs
 * @param caGeneration the generation of the TLS context that verified the handshake
 */
record CertIdentity(List<String> dnsNames, long caGeneration) {
    private static final int DNS_NAME = 2;
    private static final int MAX_NAMES = 64;

    CertIdentity {
        dnsNames = List.copyOf(dnsNames);
    }

    static CertIdentity of(X509Certificate certificate, long caGeneration) {
        List<String> names = new ArrayList<>();
        try {
            Collection<List<?>> sans = certificate.getSubjectAlternativeNames();
            if (sans != null) {
                for (List<?> san : sans) {
                    if (names.size() == MAX_NAMES) {
                        break;
                    }
                    if (san.size() == 2 && san.get(0) instanceof Integer type && type == DNS_NAME
                            && san.get(1) instanceof String name && acceptable(name)) {
                        names.add(name);
                    }
                }
            }
        } catch (CertificateParsingException e) {
            // An unparsable extension names no broker: the certificate authenticates nobody.
        }
        return new CertIdentity(names, caGeneration);
    }

    private static boolean acceptable(String name) {
        if (name.isEmpty() || name.length() > 253) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '-' && c != '.') {
                return false; // '*' (wildcards) and upper case never match an id
            }
        }
        return true;
    }
}
