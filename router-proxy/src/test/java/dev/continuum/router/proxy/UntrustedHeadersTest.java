package dev.continuum.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import org.junit.jupiter.api.Test;

class UntrustedHeadersTest {

    @Test
    void recognisesEverySpellingButKeepsTheTenant() {
        assertThat(UntrustedHeaders.isUntrusted("X-Dynamo-Worker-Instance-Id")).isTrue();
        assertThat(UntrustedHeaders.isUntrusted("x-dynamo-")).isTrue();
        assertThat(UntrustedHeaders.isUntrusted("X-DP-RANK")).isTrue();
        assertThat(UntrustedHeaders.isUntrusted("x-prefill-dp-rank")).isTrue();
        assertThat(UntrustedHeaders.isUntrusted("x-data-parallel-rank")).isTrue();
        assertThat(UntrustedHeaders.isUntrusted("x-tenant-id")).isFalse();
        assertThat(UntrustedHeaders.isUntrusted("x-dynamo")).isFalse();
        assertThat(UntrustedHeaders.isUntrusted("x-dp-ranking")).isFalse();
    }

    @Test
    void dropsAClientsDecisionIdTheRouterSendsItsOwn() {
        assertThat(UntrustedHeaders.isUntrusted("X-Continuum-Decision-Id")).isTrue();
        assertThat(UntrustedHeaders.isUntrusted("x-continuum-decision-idx")).isFalse();
        HttpHeaders h = new DefaultHttpHeaders();
        h.add("x-continuum-decision-id", "7").add("content-type", "application/json");
        UntrustedHeaders.strip(h);
        assertThat(h.names()).containsExactly("content-type");
    }

    @Test
    void keepsTheSessionHeaderItNamesAConversationNotAWorker() {
        assertThat(UntrustedHeaders.isUntrusted("X-Dynamo-Session-ID")).isFalse();
        assertThat(UntrustedHeaders.isUntrusted("x-dynamo-session-idx")).isTrue();
        HttpHeaders h = new DefaultHttpHeaders();
        h.add("x-dynamo-session-id", "conversation-1").add("x-dynamo-dp-rank", "3");
        UntrustedHeaders.strip(h);
        assertThat(h.names()).containsExactly("x-dynamo-session-id");
    }

    @Test
    void stripsAllValuesOfEveryUntrustedHeader() {
        HttpHeaders h = new DefaultHttpHeaders();
        h.add("x-dynamo-worker-instance-id", "1").add("X-Dynamo-Worker-Instance-Id", "2")
                .add("x-worker-instance-id", "3").add("x-tenant-id", "t").add("content-type", "application/json");

        UntrustedHeaders.strip(h);

        assertThat(h.names()).containsExactlyInAnyOrder("x-tenant-id", "content-type");
    }
}
