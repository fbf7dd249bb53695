package dev.continuum.router.app;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * SIGHUP → config reload, as systemd's {@code ExecReload} and {@code kill -HUP} expect. The handler
 * runs the reload on its own thread so the JVM's signal thread is never held by file I/O.
 *
 * <p>A process started with SIGHUP ignored ({@code nohup}, some supervisors) keeps it ignored: HotSpot
 * leaves an ignored SIGHUP alone rather than install a handler (see {@code JVM_RegisterSignal} in
 * openjdk/jdk17u {@code src/hotspot/os/posix/jvm_posix.cpp}) and reports the old disposition as
 * {@code SIG_IGN}. That case gets one WARN at startup, since every later {@code kill -HUP} would
 * otherwise vanish without a trace.
 */
final class Signals {
    private static final Logger LOG = LoggerFactory.getLogger(Signals.class);

    private Signals() {
    }

    /** Installs the SIGHUP handler; returns whether a SIGHUP will now run {@code action}. */
    static boolean onHangup(Runnable action) {
        SignalHandler previous;
        try {
            previous = Signal.handle(new Signal("HUP"), signal -> {
                Thread t = new Thread(action, "continuum-sighup-reload");
                t.setDaemon(true);
                t.start();
            });
        } catch (IllegalArgumentException e) {
            LOG.warn("SIGHUP is not available on this platform; reload with POST /admin/config/reload");
            return false;
        }
        if (previous == SignalHandler.SIG_IGN) {
            LOG.warn("SIGHUP is ignored by this process (started with SIGHUP ignored, e.g. under nohup), so reload"
                    + " by signal is unavailable; the config file is still watched, or reload with"
                    + " POST /admin/config/reload (or start the router without nohup)");
            return false;
        }
        return true;
    }
}
