package dev.continuum.router.core.config;

/** How a change of one config section takes effect, from cheapest to dearest. */
public enum ReloadClass {
    /** Applied on the next request or check; nothing restarts. */
    IMMEDIATE,
    /** The owning subsystem restarts its tasks (watchers, pools); the rest keeps serving. */
    RESTART_SUBSYSTEM,
    /** Only a process restart applies it (for example a listener's bind address); until then the old value stays. */
    PROCESS_RESTART
}
