package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The one masker for URLs in messages (backend URLs, etcd endpoints). */
class UrlMaskingTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "http://user:pw@h:1 | http://****@h:1",
            "http://user:p@ss@h:1/v1 | http://****@h:1/v1",
            "user:pw@h:2379 | ****@h:2379",
            "https://h:1/a@b | https://h:1/a@b",
            "http://h:1?x=a@b | http://h:1?x=a@b",
            "http://h:1 | http://h:1",
            "h:2379 | h:2379",
            "@h:1 | ****@h:1"})
    void masksTheUserInfoOfTheAuthorityOnly(String url, String shown) {
        assertThat(Problems.maskUserInfo(url)).isEqualTo(shown);
    }
}
