package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code continuum-router kv-listener}: its usage rules, and a bad file refused with each field path. */
class KvListenerCommandTest {
    @TempDir
    Path dir;

    @Test
    void needsAConfigAndTakesNoBind() throws Exception {
        assertThat(CommandLine.parse("kv-listener", "--config", "f.yaml").command())
                .isEqualTo(CommandLine.Command.KV_LISTENER);
        assertThatThrownBy(() -> CommandLine.parse("kv-listener")).hasMessageContaining("kv-listener: --config FILE");
        assertThatThrownBy(() -> CommandLine.parse("kv-listener", "--config", "f.yaml", "--bind", "0.0.0.0:1"))
                .hasMessageContaining("--bind is not accepted");
    }

    @Test
    void aBadFileStartsNothingAndNamesEachField() throws Exception {
        Path file = Files.writeString(dir.resolve("kv.yaml"),
                "bus: {url: \"http://router:7443\", client_id: kv-a}\nsources: []\n");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(new String[] {"kv-listener", "--config", file.toString()},
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Map.of());
        String text = err.toString(StandardCharsets.UTF_8);
        assertThat(code).isEqualTo(1);
        assertThat(text).contains("bus.url", "bus.token_file", "sources", "nothing was started");
    }
}
