package dev.continuum.router.core.logging;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.testing.LogCapture;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

class LogSafeTest {
    private static final Logger LOG = LoggerFactory.getLogger(LogSafeTest.class);

    @Test
    void returnsACleanStringAsItIs() {
        String key = "v1/instances/dynamo/backend/generate/694d9a5c1f2e3b4d";
        assertThat(LogSafe.escape(key)).isSameAs(key);
        String model = "Qwen/Qwen3-32B \u00e9\u4e2d\ud83d\ude00";
        assertThat(LogSafe.escape(model)).isSameAs(model);
        assertThat(LogSafe.escape(null)).isEqualTo("null");
    }

    @Test
    void escapesEveryControlAndFormattingCharacterThatCanForgeOrReorderALine() {
        assertThat(LogSafe.escape("a\nb\rc\td\\e")).isEqualTo("a\\nb\\rc\\td\\\\e");
        assertThat(LogSafe.escape("\u0000\u001b[31m\u007f\u0085\u009f"))
                .isEqualTo("\\u0000\\u001b[31m\\u007f\\u0085\\u009f");
        assertThat(LogSafe.escape("\u2028\u2029")).isEqualTo("\\u2028\\u2029");
        assertThat(LogSafe.escape("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"))
                .isEqualTo("\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c");
        assertThat(LogSafe.escape("x\ud800y\udc00")).isEqualTo("x\\ud800y\\udc00");
        assertThat(LogSafe.escape(new StringBuilder("id\n"))).isEqualTo("id\\n");
    }

    @Test
    void boundsTheOutputAndNeverSplitsASurrogatePair() {
        String huge = "k".repeat(100_000);
        assertThat(LogSafe.escape(huge)).isEqualTo("k".repeat(LogSafe.MAX_CHARS) + "...(99488 more chars)");
        assertThat(LogSafe.escape("ab\ud83d\ude00cd", 3)).isEqualTo("ab...(4 more chars)");
        assertThat(LogSafe.escape("\n".repeat(10), 2)).isEqualTo("\\n\\n...(8 more chars)");
    }

    @Test
    void aForgedKeyStaysOnOneLoggedLine() {
        String forged = "v1/instances/dynamo/x/generate/1\n2026-12-01 INFO admin login ok";
        try (LogCapture logs = LogCapture.of(LogSafeTest.class)) {
            LOG.warn("dropped record {}", LogSafe.escape(forged));
            assertThat(logs.warnings()).singleElement().satisfies(line -> assertThat(line).doesNotContain("\n")
                    .contains("generate/1\\n2026-12-01 INFO admin login ok"));
        }
    }
}
