package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * SIGHUP handling in a real child JVM, because whether SIGHUP is ignored is decided when the process
 * starts: {@code nohup} (coreutils) sets it to ignored before exec, exactly as an operator's
 * {@code nohup continuum-router &} does.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SignalsTest {
    private static final String UNAVAILABLE = "reload by signal is unavailable";

    private Process child;
    private final List<String> output = Collections.synchronizedList(new ArrayList<>());

    @AfterEach
    void stop() throws Exception {
        if (child != null) {
            child.getOutputStream().close(); // the probe exits at the end of its stdin
            if (!child.waitFor(30, TimeUnit.SECONDS)) {
                child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    private void startProbe(String... prefix) throws IOException {
        List<String> command = new ArrayList<>(List.of(prefix));
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(HangupProbe.class.getName());
        child = new ProcessBuilder(command).redirectErrorStream(true).start();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    output.add(line);
                }
            } catch (IOException closed) {
                // the child is gone
            }
        }, "probe-output");
        reader.setDaemon(true);
        reader.start();
        await().atMost(Duration.ofSeconds(60)).until(() -> output.contains("probe: ready"));
    }

    private void hangup() throws Exception {
        new ProcessBuilder("kill", "-HUP", Long.toString(child.pid())).inheritIO().start().waitFor();
    }

    @Test
    void warnsOnceAtStartupWhenSighupIsIgnored() throws Exception {
        startProbe("nohup");

        assertThat(List.copyOf(output)).filteredOn(l -> l.contains(UNAVAILABLE)).singleElement().asString()
                .contains("WARN").contains("nohup").contains("POST /admin/config/reload");
        hangup();
        // Ignored by the kernel: the handler never runs, and the process lives on.
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5))
                .until(() -> child.isAlive() && !output.contains("probe: hangup received"));
    }

    @Test
    void reloadsOnSighupWithoutWarningOtherwise() throws Exception {
        startProbe();

        assertThat(List.copyOf(output)).noneMatch(l -> l.contains(UNAVAILABLE));
        hangup();
        await().atMost(Duration.ofSeconds(30)).until(() -> output.contains("probe: hangup received"));
    }
}
