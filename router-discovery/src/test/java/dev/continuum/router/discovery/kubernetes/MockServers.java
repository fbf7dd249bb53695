package dev.continuum.router.discovery.kubernetes;

import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;

/** Teardown of the fabric8 mock server, tolerant of its one known slow-machine failure. */
final class MockServers {
    private MockServers() {
    }

    /**
     * Stops {@code server}. Its HTTP server and its Vert.x instance close asynchronously and the mock server
     * waits a fixed time for each; on a loaded machine either wait has timed out ("Unable to close
     * MockWebServer", "Unable to close Vertx") after every assertion of the test had passed. The close still
     * completes in the background, so those timeouts alone are not a test failure; anything else is rethrown.
     */
    static void destroy(KubernetesMockServer server) {
        try {
            server.destroy();
        } catch (IllegalStateException e) {
            if (!closeTimedOut(e)) {
                throw e;
            }
            System.getLogger(MockServers.class.getName()).log(System.Logger.Level.WARNING,
                    "the Kubernetes mock server's close timed out (" + e.getMessage() + "); it goes on in the background");
        }
    }

    private static boolean closeTimedOut(IllegalStateException e) {
        String m = e.getMessage();
        boolean known = m != null && (m.contains("Unable to close Vertx") || m.contains("Unable to close MockWebServer"));
        return known && (e.getCause() == null || e.getCause() instanceof java.util.concurrent.TimeoutException);
    }
}
