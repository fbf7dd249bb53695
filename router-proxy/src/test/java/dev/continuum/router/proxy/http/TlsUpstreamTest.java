package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.proxy.ProxyOptions;
import dev.continuum.router.testing.TestCertificate;
import dev.continuum.router.testing.TestUpstream;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.net.http.HttpResponse;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TlsUpstreamTest {
    @RegisterExtension
    final RouterExtension harness = RouterExtension.builder().build();
    private TestUpstream upstream;
    private RouterHarness router;

    private static SslContext trusting(TestCertificate cert) {
        try {
            return SslContextBuilder.forClient().sslProvider(SslProvider.JDK).trustManager(cert.certificate())
                    .endpointIdentificationAlgorithm("HTTPS").build();
        } catch (javax.net.ssl.SSLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void proxiesToAnHttpsBackend() throws Exception {
        TestCertificate cert = TestCertificate.selfSigned("127.0.0.1");
        upstream = harness.startTls("secure", cert);
        router = harness.start(ConfigBuilder.create().backend("secure", upstream.baseUrl(), "m").build(),
                s -> s.proxyOptions(ProxyOptions.defaults().withUpstreamTls(trusting(cert))));

        HttpResponse<String> res = router.chat("m");

        assertThat(res.statusCode()).isEqualTo(200);
        assertThat(res.body()).contains("\"upstream\":\"secure\"");
        assertThat(upstream.completionRequests().get(0).header("host")).isEqualTo("127.0.0.1:" + upstream.port());
    }

    @Test
    void refusesACertificateForAnotherHost() throws Exception {
        TestCertificate cert = TestCertificate.selfSigned("other.example");
        upstream = harness.startTls("impostor", cert);
        router = harness.start(ConfigBuilder.create().backend("impostor", upstream.baseUrl(), "m").noRetry().build(),
                s -> s.proxyOptions(ProxyOptions.defaults().withUpstreamTls(trusting(cert))));

        assertThat(router.chat("m").statusCode()).isEqualTo(502);
        assertThat(upstream.completionCount()).isZero();
    }

    @Test
    void theDefaultTrustStoreRefusesAnUnknownIssuer() {
        upstream = harness.startTls("self-signed", TestCertificate.selfSigned("127.0.0.1"));
        router = harness.start(ConfigBuilder.create().backend("self-signed", upstream.baseUrl(), "m").noRetry().build());

        assertThat(router.chat("m").statusCode()).isEqualTo(502);
        assertThat(upstream.completionCount()).isZero();
    }
}
