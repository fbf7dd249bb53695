package dev.continuum.router.core.http;

/** Fired on every open connection when graceful shutdown begins. */
final class ShutdownEvent {
    static final ShutdownEvent INSTANCE = new ShutdownEvent();

    private ShutdownEvent() {
    }
}
