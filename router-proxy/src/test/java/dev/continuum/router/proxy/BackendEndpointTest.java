package dev.continuum.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import org.junit.jupiter.api.Test;

class BackendEndpointTest {

    @Test
    void appendsClientPathsToTheUrlPath() {
        BackendEndpoint plain = BackendEndpoint.of(URI.create("http://h:8000"));
        assertThat(plain.target("/v1/chat/completions", null)).isEqualTo("/v1/chat/completions");
        assertThat(plain.hostHeader()).isEqualTo("h:8000");
        assertThat(plain.tls()).isFalse();

        BackendEndpoint prefixed = BackendEndpoint.of(URI.create("https://api.example/api/"));
        assertThat(prefixed.target("/v1/models", "a=1")).isEqualTo("/api/v1/models?a=1");
        assertThat(prefixed.port()).isEqualTo(443);
        assertThat(prefixed.hostHeader()).isEqualTo("api.example");
        assertThat(prefixed.tls()).isTrue();

        BackendEndpoint v6 = BackendEndpoint.of(URI.create("http://[::1]:9000/x"));
        assertThat(v6.host()).isEqualTo("::1");
        assertThat(v6.hostHeader()).isEqualTo("[::1]:9000");
    }
}
