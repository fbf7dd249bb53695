package dev.continuum.router.discovery.etcd;

import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.continuum.router.core.config.Secret;
import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.config.EtcdAuthConfig;
import dev.continuum.router.discovery.config.EtcdConfig;
import dev.continuum.router.discovery.config.EtcdTlsConfig;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.testing.EtcdExtension;
import dev.continuum.router.testing.TestCertificates;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The etcd source over TLS (CA, client certificate, server name override) and with authentication. */
@Timeout(60)
class EtcdTlsAndAuthTest {
    private static final Duration SEED = Duration.ofSeconds(5);

    /** Opens a pass, checks its first listing, and proves a watch event arrives over the same connection. */
    private static void readsAndWatches(EtcdExtension etcd, EtcdConfig config, String namespace) throws Exception {
        etcd.put(endpointKey(namespace, "decode", "generate", 1), endpoint(namespace, "decode", "generate", 1));
        EtcdWatchSource source = new EtcdWatchSource(config, DiscoveryCounters.NONE);
        try (var pass = source.open(SEED)) {
            assertThat(pass.seed()).extracting(DiscoveryEvent.Put::key)
                    .containsExactly(endpointKey(namespace, "decode", "generate", 1));
            CountDownLatch opened = new CountDownLatch(1);
            List<DiscoveryEvent> events = new CopyOnWriteArrayList<>();
            CountDownLatch received = new CountDownLatch(1);
            pass.follow(new dev.continuum.router.discovery.source.WatchSource.PassListener() {
                @Override
                public void opened() {
                    opened.countDown();
                }

                @Override
                public void events(List<DiscoveryEvent> batch) {
                    events.addAll(batch);
                    received.countDown();
                }

                @Override
                public void ended(String reason, Throwable cause) {
                }
            });
            assertThat(opened.await(10, TimeUnit.SECONDS)).isTrue();
            etcd.put(endpointKey(namespace, "decode", "generate", 2), endpoint(namespace, "decode", "generate", 2));
            assertThat(received.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(events).extracting(e -> ((DiscoveryEvent.Put) e).key())
                    .containsExactly(endpointKey(namespace, "decode", "generate", 2));
        }
    }

    @Nested
    class MutualTls {
        @RegisterExtension
        static final EtcdExtension etcd = EtcdExtension.tls();

        @Test
        void readsAndWatchesWithACaAndAClientCertificate() throws Exception {
            TestCertificates certs = etcd.certificates();
            EtcdConfig config = EtcdConfig.defaults().withEndpoints(List.of(etcd.endpoint()))
                    .withNamespaces("tls", List.of())
                    .withTls(new EtcdTlsConfig(certs.caCert(), certs.clientCert(),
                            Secret.of(certs.clientKey().toString()), null));
            readsAndWatches(etcd, config, "tls");
        }

        @Test
        void failsWithoutTheClientCertificateTheServerRequires() {
            EtcdConfig config = EtcdConfig.defaults().withEndpoints(List.of(etcd.endpoint()))
                    .withTls(new EtcdTlsConfig(etcd.certificates().caCert(), null, null, null));
            assertThatThrownBy(() -> new EtcdWatchSource(config, DiscoveryCounters.NONE).open(SEED).close())
                    .isInstanceOf(EtcdReadException.class);
        }

        @Test
        void failsWhenTheServerIsNotSignedByTheConfiguredCa(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
            TestCertificates other = TestCertificates.generate(dir, List.of("127.0.0.1"));
            TestCertificates certs = etcd.certificates();
            EtcdConfig config = EtcdConfig.defaults().withEndpoints(List.of(etcd.endpoint()))
                    .withTls(new EtcdTlsConfig(other.caCert(), certs.clientCert(), Secret.of(certs.clientKey().toString()),
                            null));
            assertThatThrownBy(() -> new EtcdWatchSource(config, DiscoveryCounters.NONE).open(SEED).close())
                    .isInstanceOf(EtcdReadException.class);
        }
    }

    @Nested
    class ServerNameOverride {
        /** The certificate names only etcd.internal: connecting to 127.0.0.1 needs server_name. */
        @RegisterExtension
        static final EtcdExtension etcd = EtcdExtension.tls("etcd.internal");

        private EtcdConfig config(String serverName) {
            TestCertificates certs = etcd.certificates();
            return EtcdConfig.defaults().withEndpoints(List.of(etcd.endpoint())).withNamespaces("sni", List.of())
                    .withTls(new EtcdTlsConfig(certs.caCert(), certs.clientCert(), Secret.of(certs.clientKey().toString()),
                            serverName));
        }

        @Test
        void verifiesTheServerAgainstServerName() throws Exception {
            readsAndWatches(etcd, config("etcd.internal"), "sni");
        }

        @Test
        void refusesACertificateForAnotherName() {
            assertThatThrownBy(() -> new EtcdWatchSource(config(null), DiscoveryCounters.NONE).open(SEED).close())
                    .isInstanceOf(EtcdReadException.class);
        }
    }

    @Nested
    class Authentication {
        @RegisterExtension
        static final EtcdExtension etcd = EtcdExtension.withAuth();

        @Test
        void readsAndWatchesAsAReadOnlyUser() throws Exception {
            EtcdConfig config = EtcdConfig.defaults().withEndpoints(List.of(etcd.endpoint()))
                    .withNamespaces("auth", List.of())
                    .withAuth(new EtcdAuthConfig(EtcdExtension.READER_USER, Secret.of(EtcdExtension.READER_PASSWORD)));
            readsAndWatches(etcd, config, "auth");
        }

        @Test
        void failsWithAWrongPassword() {
            EtcdConfig config = EtcdConfig.defaults().withEndpoints(List.of(etcd.endpoint()))
                    .withAuth(new EtcdAuthConfig(EtcdExtension.READER_USER, Secret.of("wrong")));
            assertThatThrownBy(() -> new EtcdWatchSource(config, DiscoveryCounters.NONE).open(SEED).close())
                    .isInstanceOf(EtcdReadException.class);
        }

        @Test
        void failsWithoutCredentials() {
            EtcdConfig config = EtcdConfig.defaults().withEndpoints(List.of(etcd.endpoint()));
            assertThatThrownBy(() -> new EtcdWatchSource(config, DiscoveryCounters.NONE).open(SEED).close())
                    .isInstanceOf(EtcdReadException.class);
        }
    }
}
