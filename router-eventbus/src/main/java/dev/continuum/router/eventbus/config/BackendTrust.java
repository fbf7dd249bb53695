package dev.continuum.router.eventbus.config;

import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.Problems;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The CA bundle an {@code https} KV-event stream is verified against instead of the JDK's trust store
 * (docs/kv-routing.md, "The backend KV cache index"). Read and parsed when the config is validated, so a missing,
 * unreadable or non-certificate file is a config error naming its field, not a failure of the first connection.
 * Equality is by the certificates, so a reload that finds different ones restarts the stream.
 *
 * @param file    the PEM file as configured
 * @param trusted its X.509 certificates, at least one
 */
public record BackendTrust(Path file, List<X509Certificate> trusted) {
    /** A CA bundle is a handful of certificates; a larger file is not one. */
    public static final int MAX_FILE_BYTES = 1 << 20;
    private static final int MAX_CERTIFICATES = 256;

    public BackendTrust {
        Objects.requireNonNull(file, "file");
        trusted = List.copyOf(trusted);
        if (trusted.isEmpty()) {
            throw new IllegalArgumentException("trusted: at least one certificate");
        }
    }

    /** Binds the PEM file {@code node} names; null (and an error on {@code node}) when it cannot be used. */
    public static @Nullable BackendTrust bind(ConfigNode node) {
        String text = node.asPathString();
        if (text == null) {
            return null;
        }
        Path path;
        try {
            path = Path.of(text);
        } catch (InvalidPathException e) {
            node.invalid("a file path");
            return null;
        }
        String problem;
        try {
            return load(path);
        } catch (IOException e) {
            problem = "cannot be read";
        } catch (CertificateException | IllegalArgumentException e) {
            problem = e.getMessage() == null ? "not a PEM CA bundle" : e.getMessage();
        }
        node.error(Problems.render(text) + " (expected: a readable PEM file of CA certificates; " + problem + ")");
        return null;
    }

    /** Reads and parses {@code path}; the exception says what is wrong with it. */
    public static BackendTrust load(Path path) throws IOException, CertificateException {
        if (Files.size(path) > MAX_FILE_BYTES) {
            throw new CertificateException("larger than " + MAX_FILE_BYTES + " bytes");
        }
        byte[] bytes = Files.readAllBytes(path);
        if (bytes.length > MAX_FILE_BYTES) {
            throw new CertificateException("larger than " + MAX_FILE_BYTES + " bytes");
        }
        List<X509Certificate> certificates = new ArrayList<>();
        java.util.Collection<? extends Certificate> parsed;
        try (InputStream in = new ByteArrayInputStream(bytes)) {
            parsed = CertificateFactory.getInstance("X.509").generateCertificates(in);
        } catch (CertificateException e) {
            // The parser's own words name internals; the operator needs only this.
            throw new CertificateException("not a PEM bundle of X.509 certificates");
        }
        for (Certificate c : parsed) {
            if (!(c instanceof X509Certificate x509)) {
                throw new CertificateException("not an X.509 certificate");
            }
            if (certificates.size() == MAX_CERTIFICATES) {
                throw new CertificateException("more than " + MAX_CERTIFICATES + " certificates");
            }
            certificates.add(x509);
        }
        if (certificates.isEmpty()) {
            throw new CertificateException("no certificate in it");
        }
        return new BackendTrust(path, certificates);
    }

    /** The readback shows the file, as configured. */
    @com.fasterxml.jackson.annotation.JsonValue
    @Override
    public String toString() {
        return file.toString();
    }
}
