package dev.continuum.router.proxy.auth;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.ApiKeyConfig;
import dev.continuum.router.core.config.ApiKeysConfig;
import dev.continuum.router.core.config.Secret;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

class DigestApiKeyAuthenticatorTest {
    private static final Instant NOW = Instant.parse("2026-06-01T00:00:00Z");
    private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

    private static ApiKeyConfig key(String id, String value, boolean enabled, Instant expires) {
        return new ApiKeyConfig(Secret.of(value), id, null, null, null, List.of(), List.of(), List.of(), null,
                enabled, expires);
    }

    private static HttpHeaders headers(String... kv) {
        HttpHeaders h = new DefaultHttpHeaders();
        for (int i = 0; i < kv.length; i += 2) {
            h.add(kv[i], kv[i + 1]);
        }
        return h;
    }

    private final List<ApiKeyConfig> keys = List.of(key("a", "sk-a", true, null), key("off", "sk-off", false, null),
            key("old", "sk-old", true, NOW), key("future", "sk-future", true, NOW.plusSeconds(1)));

    @Test
    void blockingModeNeedsAUsableKey() {
        ApiKeyAuthenticator auth = ApiKeyAuthenticator.create(new ApiKeysConfig(ApiKeysConfig.Mode.BLOCKING, null, keys), CLOCK);
        assertThat(auth.authenticate(headers())).isInstanceOf(AuthResult.Rejected.class);
        assertThat(auth.authenticate(headers("authorization", "Bearer sk-b"))).isInstanceOf(AuthResult.Rejected.class);
        assertThat(auth.authenticate(headers("authorization", "Bearer sk-off"))).isInstanceOf(AuthResult.Rejected.class);
        assertThat(auth.authenticate(headers("authorization", "Bearer sk-old"))).isInstanceOf(AuthResult.Rejected.class);
        assertThat(auth.authenticate(headers("authorization", "bearer  sk-future "))).isInstanceOf(AuthResult.Authenticated.class);
        assertThat(auth.authenticate(headers("authorization", "Basic c2stYQ=="))).isInstanceOf(AuthResult.Rejected.class);
        AuthResult viaHeader = auth.authenticate(headers("x-api-key", "sk-a"));
        assertThat(viaHeader).isEqualTo(new AuthResult.Authenticated(keys.get(0), AuthResult.CredentialSource.X_API_KEY));
    }

    @Test
    void findsTheRouterKeyInEitherHeader() {
        ApiKeyAuthenticator auth = ApiKeyAuthenticator.create(new ApiKeysConfig(ApiKeysConfig.Mode.BLOCKING, null, keys), CLOCK);
        AuthResult r = auth.authenticate(headers("authorization", "Bearer upstream-token", "x-api-key", "sk-a"));
        assertThat(r).isEqualTo(new AuthResult.Authenticated(keys.get(0), AuthResult.CredentialSource.X_API_KEY));
    }

    @Test
    void permissiveModeLetsMissingKeysThroughOnly() {
        ApiKeyAuthenticator auth = ApiKeyAuthenticator.create(new ApiKeysConfig(ApiKeysConfig.Mode.PERMISSIVE, null, keys), CLOCK);
        assertThat(auth.authenticate(headers())).isInstanceOf(AuthResult.Anonymous.class);
        assertThat(auth.authenticate(headers("authorization", "Bearer sk-unknown"))).isInstanceOf(AuthResult.Rejected.class);
        assertThat(auth.authenticate(headers("authorization", "Bearer sk-a"))).isInstanceOf(AuthResult.Authenticated.class);
    }

    @Test
    void permissiveModeWithoutKeysIsOff() {
        ApiKeyAuthenticator auth = ApiKeyAuthenticator.create(ApiKeysConfig.defaults(), CLOCK);
        assertThat(auth.enabled()).isFalse();
        assertThat(auth.authenticate(headers("authorization", "Bearer anything"))).isInstanceOf(AuthResult.Anonymous.class);
    }

    @Test
    void rejectionsNeverEchoTheKey() {
        ApiKeyAuthenticator auth = ApiKeyAuthenticator.create(new ApiKeysConfig(ApiKeysConfig.Mode.BLOCKING, null, keys), CLOCK);
        AuthResult r = auth.authenticate(headers("authorization", "Bearer sk-secret-guess"));
        assertThat(((AuthResult.Rejected) r).message()).doesNotContain("sk-secret-guess");
    }
}
