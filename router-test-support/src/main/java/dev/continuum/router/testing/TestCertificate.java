package dev.continuum.router.testing;

import java.math.BigInteger;
import java.net.InetAddress;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A self-signed certificate made at test time (BouncyCastle), for TLS upstreams. Subject
 * alternative names are IP literals when they parse as such, DNS names otherwise.
 */
public record TestCertificate(PrivateKey key, X509Certificate certificate) {

    public static TestCertificate selfSigned(String... subjectAltNames) {
        try {
            KeyPairGenerator gen = KeyPairGenerator.getInstance("EC");
            gen.initialize(256, new SecureRandom());
            KeyPair pair = gen.generateKeyPair();
            X500Name subject = new X500Name("CN=" + subjectAltNames[0]);
            Instant now = Instant.now();
            JcaX509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(subject,
                    BigInteger.valueOf(now.toEpochMilli()), Date.from(now.minus(Duration.ofHours(1))),
                    Date.from(now.plus(Duration.ofDays(1))), subject, pair.getPublic());
            GeneralName[] names = new GeneralName[subjectAltNames.length];
            for (int i = 0; i < subjectAltNames.length; i++) {
                String n = subjectAltNames[i];
                boolean ip = n.chars().allMatch(c -> Character.isDigit(c) || c == '.') || n.contains(":");
                names[i] = ip ? new GeneralName(GeneralName.iPAddress, InetAddress.getByName(n).getHostAddress())
                        : new GeneralName(GeneralName.dNSName, n);
            }
            b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names));
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
            X509Certificate cert = new JcaX509CertificateConverter()
                    .getCertificate(b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(pair.getPrivate())));
            return new TestCertificate(pair.getPrivate(), cert);
        } catch (Exception e) {
            throw new IllegalStateException("cannot make a test certificate", e);
        }
    }
}
