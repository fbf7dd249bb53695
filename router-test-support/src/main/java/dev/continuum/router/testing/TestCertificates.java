package dev.continuum.router.testing;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.jspecify.annotations.Nullable;

/**
 * A CA, a server certificate and a client certificate generated at test time and written as PEM files
 * (keys as unencrypted PKCS#8, which both Go's TLS stack and Netty read). EC P-256 keys: fast to generate.
 *
 * @param caCert     the CA certificate both sides trust
 * @param serverCert the server certificate, valid for the given names
 * @param serverKey  its key
 * @param clientCert a client certificate signed by the CA (for {@code --client-cert-auth})
 * @param clientKey  its key
 */
public record TestCertificates(Path caCert, Path serverCert, Path serverKey, Path clientCert, Path clientKey) {

    /**
     * @param serverNames DNS names and IP literals the server certificate is valid for
     */
    public static TestCertificates generate(Path directory, List<String> serverNames) {
        return generate(directory, serverNames, List.of());
    }

    /**
     * @param serverNames     DNS names and IP literals the server certificate is valid for
     * @param clientDnsNames  DNS subject alternative names of the client certificate (none when empty)
     */
    public static TestCertificates generate(Path directory, List<String> serverNames, List<String> clientDnsNames) {
        try {
            Files.createDirectories(directory);
            KeyPair caKeys = newKeyPair();
            X500Name caName = new X500Name("CN=continuum-test-ca");
            X509Certificate ca = sign(caName, caKeys, caName, caKeys.getPublic(), true, null, null);

            KeyPair serverKeys = newKeyPair();
            List<GeneralName> names = new ArrayList<>();
            for (String name : serverNames) {
                names.add(isIpLiteral(name) ? new GeneralName(GeneralName.iPAddress, name)
                        : new GeneralName(GeneralName.dNSName, name));
            }
            X509Certificate server = sign(caName, caKeys, new X500Name("CN=" + serverNames.get(0)),
                    serverKeys.getPublic(), false, new GeneralNames(names.toArray(GeneralName[]::new)),
                    new ExtendedKeyUsage(new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));

            KeyPair clientKeys = newKeyPair();
            GeneralNames clientNames = clientDnsNames.isEmpty() ? null : new GeneralNames(clientDnsNames.stream()
                    .map(n -> new GeneralName(GeneralName.dNSName, n)).toArray(GeneralName[]::new));
            X509Certificate client = sign(caName, caKeys, new X500Name("CN=continuum-router"), clientKeys.getPublic(),
                    false, clientNames, new ExtendedKeyUsage(KeyPurposeId.id_kp_clientAuth));

            TestCertificates files = new TestCertificates(directory.resolve("ca.pem"), directory.resolve("server.pem"),
                    directory.resolve("server-key.pem"), directory.resolve("client.pem"),
                    directory.resolve("client-key.pem"));
            writePem(files.caCert, ca);
            writePem(files.serverCert, server);
            writePem(files.serverKey, new JcaPKCS8Generator(serverKeys.getPrivate(), null));
            writePem(files.clientCert, client);
            writePem(files.clientKey, new JcaPKCS8Generator(clientKeys.getPrivate(), null));
            return files;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("cannot generate test certificates", e);
        }
    }

    private static KeyPair newKeyPair() throws GeneralSecurityException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"), new SecureRandom());
        return generator.generateKeyPair();
    }

    private static X509Certificate sign(X500Name issuer, KeyPair issuerKeys, X500Name subject,
                                        java.security.PublicKey subjectKey, boolean ca, @Nullable GeneralNames altNames,
                                        @Nullable ExtendedKeyUsage extendedKeyUsage)
            throws IOException, GeneralSecurityException, OperatorCreationException {
        Instant now = Instant.now();
        X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(issuer,
                new BigInteger(64, new SecureRandom()), Date.from(now.minus(Duration.ofHours(1))),
                Date.from(now.plus(Duration.ofDays(2))), subject, subjectKey);
        builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(ca));
        builder.addExtension(Extension.keyUsage, true, ca
                ? new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign)
                : new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
        if (altNames != null) {
            builder.addExtension(Extension.subjectAlternativeName, false, altNames);
        }
        if (extendedKeyUsage != null) {
            builder.addExtension(Extension.extendedKeyUsage, false, extendedKeyUsage);
        }
        ContentSigner signer = new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKeys.getPrivate());
        return new JcaX509CertificateConverter().getCertificate(builder.build(signer));
    }

    private static boolean isIpLiteral(String name) {
        return name.chars().allMatch(c -> Character.isDigit(c) || c == '.') || name.contains(":");
    }

    private static void writePem(Path file, Object object) throws IOException {
        StringWriter text = new StringWriter();
        try (JcaPEMWriter writer = new JcaPEMWriter(text)) {
            writer.writeObject(object instanceof JcaPKCS8Generator generator ? generator.generate() : object);
        }
        Files.writeString(file, text.toString());
    }
}
