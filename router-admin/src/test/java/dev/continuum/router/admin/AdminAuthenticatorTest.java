package dev.continuum.router.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.admin.AdminAuthenticator.Verdict;
import dev.continuum.router.core.config.AdminConfig;
import dev.continuum.router.core.config.AdminConfig.AuthMethod;
import dev.continuum.router.core.config.Secret;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class AdminAuthenticatorTest {
    private static final AdminConfig BEARER = new AdminConfig(true, AuthMethod.BEARER_TOKEN, Secret.of("s3cret"),
            null, null, null);
    private static final AdminConfig BASIC = new AdminConfig(true, AuthMethod.BASIC, null, "ops",
            Secret.of("pa:ss"), null);
    private static final AdminConfig API_KEY = new AdminConfig(true, AuthMethod.API_KEY, null, null, null,
            Secret.of("k-1"));
    private static final AdminConfig OPEN = new AdminConfig(true, AuthMethod.NONE, null, null, null, null);

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of(BEARER, "Bearer s3cret", null, Verdict.ALLOWED),
                Arguments.of(BEARER, "bearer   s3cret ", null, Verdict.ALLOWED),
                Arguments.of(BEARER, "Bearer s3cre", null, Verdict.UNAUTHORIZED),
                Arguments.of(BEARER, "Bearer s3cret2", null, Verdict.UNAUTHORIZED),
                Arguments.of(BEARER, "Basic s3cret", null, Verdict.UNAUTHORIZED),
                Arguments.of(BEARER, "Bearer", null, Verdict.UNAUTHORIZED),
                Arguments.of(BEARER, null, "s3cret", Verdict.UNAUTHORIZED),
                Arguments.of(BEARER, null, null, Verdict.UNAUTHORIZED),
                Arguments.of(BASIC, basic("ops:pa:ss"), null, Verdict.ALLOWED),
                Arguments.of(BASIC, basic("ops:pa"), null, Verdict.UNAUTHORIZED),
                Arguments.of(BASIC, basic("root:pa:ss"), null, Verdict.UNAUTHORIZED),
                Arguments.of(BASIC, "Basic !!not-base64!!", null, Verdict.UNAUTHORIZED),
                Arguments.of(BASIC, basic("no-colon"), null, Verdict.UNAUTHORIZED),
                Arguments.of(API_KEY, null, "k-1", Verdict.ALLOWED),
                Arguments.of(API_KEY, "Bearer k-1", null, Verdict.UNAUTHORIZED),
                Arguments.of(API_KEY, null, "k-2", Verdict.UNAUTHORIZED),
                Arguments.of(OPEN, null, null, Verdict.ALLOWED),
                Arguments.of(AdminConfig.disabled(), "Bearer anything", null, Verdict.DISABLED));
    }

    @ParameterizedTest
    @MethodSource("cases")
    void decidesEachCredentialShape(AdminConfig config, @Nullable String authorization, @Nullable String apiKey,
                                    Verdict expected) {
        assertThat(new AdminAuthenticator(() -> config).check(authorization, apiKey).verdict()).isEqualTo(expected);
    }

    @Test
    void readsTheLiveConfigOnEveryCall() {
        AdminConfig[] live = {BEARER};
        AdminAuthenticator auth = new AdminAuthenticator(() -> live[0]);
        assertThat(auth.check("Bearer s3cret", null).verdict()).isEqualTo(Verdict.ALLOWED);
        live[0] = new AdminConfig(true, AuthMethod.BEARER_TOKEN, Secret.of("rotated"), null, null, null);
        assertThat(auth.check("Bearer s3cret", null).verdict()).isEqualTo(Verdict.UNAUTHORIZED);
        assertThat(auth.check("Bearer rotated", null).verdict()).isEqualTo(Verdict.ALLOWED);
    }

    @Test
    void keepsAuditPathsOnOneBoundedLine() {
        assertThat(AdminAuditLog.sanitize("/admin/x\r\nforged: 1")).isEqualTo("/admin/x__forged:_1");
        assertThat(AdminAuditLog.sanitize("/" + "a".repeat(1000))).hasSize(256);
    }

    private static String basic(String userPass) {
        return "Basic " + Base64.getEncoder().encodeToString(userPass.getBytes(StandardCharsets.UTF_8));
    }
}
