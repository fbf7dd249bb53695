package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.internal.Units;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class UnitsTest {
    @ParameterizedTest
    @CsvSource({
        "500ms, 500",
        "30s, 30000",
        "5m, 300000",
        "1h, 3600000",
        "1m30s, 90000",
        "1h2m3s4ms, 3723004",
        "2d, 172800000",
        "45, 45000",
        "0, 0",
    })
    void readsDurations(String text, long millis) {
        assertThat(Units.parseDuration(text)).isEqualTo(Duration.ofMillis(millis));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "-5s", "1.5s", "5 minutes", "s", "30x", "1m30", "PT5S"})
    void refusesMalformedDurations(String text) {
        assertThat(Units.parseDuration(text)).isNull();
    }

    @ParameterizedTest
    @CsvSource({"500, 500ms", "30000, 30s", "300000, 5m", "90000, 1m30s", "3600000, 1h", "0, 0s", "1500, 1s500ms"})
    void formatsDurationsInUnitsThatReadBack(long millis, String text) {
        Duration d = Duration.ofMillis(millis);
        assertThat(Units.formatDuration(d)).isEqualTo(text);
        assertThat(Units.parseDuration(Units.formatDuration(d))).isEqualTo(d);
    }

    @ParameterizedTest
    @CsvSource({
        "1048576, 1048576",
        "512KiB, 524288",
        "10MiB, 10485760",
        "1GiB, 1073741824",
        "10MB, 10000000",
        "10KB, 10000",
        "10 MiB, 10485760",
        "10mib, 10485760",
        "7B, 7",
        "2TiB, 2199023255552",
    })
    void readsByteSizes(String text, long bytes) {
        assertThat(Units.parseByteSize(text)).isEqualTo(bytes);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "10XB", "-1", "1.5MiB", "MiB", "99999999999TiB"})
    void refusesMalformedOrOverflowingByteSizes(String text) {
        assertThat(Units.parseByteSize(text)).isNull();
    }

    @ParameterizedTest
    @CsvSource({"0o660, 432", "0660, 432", "432, 432", "0o777, 511", "0, 0", "0o0, 0", "0600, 384"})
    void readsSocketModesAsOctalOrDecimal(String text, int mode) {
        assertThat(Units.parseFileMode(text)).isEqualTo(mode);
    }

    @ParameterizedTest
    @ValueSource(strings = {"0o999", "0o1000", "512", "rw-rw----", "0x1b0", "-1", "09"})
    void refusesSocketModesThatAreNotPermissionBits(String text) {
        assertThat(Units.parseFileMode(text)).isNull();
    }

    @Test
    void readsEverySocketModeSpellingFromYaml() {
        for (String spelling : new String[] {"0o660", "0660", "432", "\"0o660\""}) {
            LoadResult r = TestConfigs.load(TestConfigs.ONE_BACKEND
                    + "server: {bind_address: \"unix:/run/router.sock\", socket_mode: " + spelling + "}");
            assertThat(r.orThrow().server().socketMode()).as(spelling).isEqualTo(0660);
        }
    }

    @Test
    void readsDurationsAndSizesInTheirSections() {
        RouterConfig c = TestConfigs.load(TestConfigs.ONE_BACKEND + """
                server: {request_timeout: 1m30s, max_request_body_size: 512KiB, connect_timeout: 2}
                health_checks: {interval: 500ms, timeout: 250ms}
                """).orThrow();

        assertThat(c.server().requestTimeout()).isEqualTo(Duration.ofSeconds(90));
        assertThat(c.server().connectTimeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(c.server().maxRequestBodySize()).isEqualTo(ByteSize.ofKiB(512));
        assertThat(c.healthChecks().interval()).isEqualTo(Duration.ofMillis(500));
    }
}
