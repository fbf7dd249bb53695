package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A placeholder admin credential is refused, naming the field, once a listener reaches beyond loopback. */
class PlaceholderSecretsTest {
    private static LoadResult load(String bind, String auth) {
        return TestConfigs.load(TestConfigs.ONE_BACKEND + "server: {bind_address: \"" + bind + "\"}\nadmin:\n  auth: " + auth + "\n");
    }

    @Test
    void aPlaceholderTokenOnEveryInterfaceIsAnErrorAtTheTokensPath() {
        LoadResult r = load("0.0.0.0:8080", "{method: bearer_token, token: Change_Me}");

        assertThat(r.ok()).isFalse();
        assertThat(TestConfigs.errorLines(r)).singleElement().asString()
                .startsWith("admin.auth.token: a placeholder value")
                .doesNotContain("Change_Me");
    }

    @Test
    void theSameTokenOnLoopbackOrUnixSocketsOnlyIsAccepted() {
        assertThat(load("127.0.0.1:8080", "{method: bearer_token, token: change-me}").problems()).isEmpty();
        assertThat(load("unix:/run/router.sock", "{method: bearer_token, token: change-me}").problems()).isEmpty();
    }

    @Test
    void basicPasswordsAndApiKeysAreCheckedTooAndARealSecretPasses() {
        assertThat(TestConfigs.errorLines(load("[::]:8080", "{method: basic, username: ops, password: password}")))
                .singleElement().asString().startsWith("admin.auth.password: a placeholder value");
        assertThat(TestConfigs.errorLines(load("10.1.2.3:8080", "{method: api_key, api_key: secret}")))
                .singleElement().asString().startsWith("admin.auth.api_key: a placeholder value");
        assertThat(load("0.0.0.0:8080", "{method: bearer_token, token: 9f2c4e1a7b}").problems()).isEmpty();
    }
}
