package dev.continuum.router.app;

import java.io.IOException;

/**
 * A child JVM for {@link SignalsTest}: installs the SIGHUP handler the way startup does, says it is
 * ready, prints a line for each SIGHUP, and exits when its stdin closes (the test's way to stop it).
 */
final class HangupProbe {
    private HangupProbe() {
    }

    public static void main(String[] args) throws IOException {
        Signals.onHangup(() -> System.out.println("probe: hangup received"));
        System.out.println("probe: ready");
        System.out.flush();
        while (System.in.read() >= 0) {
            // drain until the test closes our stdin
        }
    }
}
