package dev.continuum.router.proxy.http;

/** Fired on every open connection when graceful shutdown begins. */
final class ShutdownEvent {
    static final ShutdownEvent INSTANCE = new ShutdownEvent();

    private ShutdownEvent() {
    }
}
