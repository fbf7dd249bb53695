package dev.continuum.router.proxy.http;

import java.io.IOException;
import java.net.URI;

/**
 * A router in its own JVM for {@link EarlyAnswerTest}'s bounded-heap case: default server limits, one backend
 * (never reached: the uploads name a model it does not serve). Prints {@code probe: port N} when listening and
 * stops at the end of its stdin.
 */
public final class LingerProbe {
    private LingerProbe() {
    }

    public static void main(String[] args) throws IOException {
        ConfigBuilder cfg = ConfigBuilder.create().backend("a", URI.create("http://127.0.0.1:9"), "m");
        try (RouterHarness router = RouterHarness.start(cfg.build())) {
            System.out.println("probe: port " + router.port);
            System.out.flush();
            while (System.in.read() >= 0) {
                // runs until the parent closes our stdin
            }
        }
    }
}
