package dev.continuum.router.app;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;

/**
 * SIGHUP → config reload, as systemd's {@code ExecReload} and {@code kill -HUP} expect. The handler
 * runs the reload on its own thread so the JVM's signal thread is never held by file I/O.
 */
final class Signals {
    private static final Logger LOG = LoggerFactory.getLogger(Signals.class);

    private Signals() {
    }

    static void onHangup(Runnable action) {
        try {
            Signal.handle(new Signal("HUP"), signal -> {
                Thread t = new Thread(action, "continuum-sighup-reload");
                t.setDaemon(true);
                t.start();
            });
        } catch (IllegalArgumentException e) {
            LOG.warn("SIGHUP is not available on this platform; reload with POST /admin/config/reload");
        }
    }
}
