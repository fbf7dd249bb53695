package dev.continuum.router.proxy.http;

import org.jspecify.annotations.Nullable;

/** Recognizes an allocation failure however Netty wrapped it (a decoder wraps its cause, for one). */
final class OutOfMemory {
    /** Causes followed before giving up: a chain this deep is not an allocation failure's. */
    private static final int MAX_DEPTH = 8;

    private OutOfMemory() {
    }

    static boolean in(Throwable t) {
        @Nullable Throwable c = t;
        for (int i = 0; i < MAX_DEPTH && c != null; i++) {
            if (c instanceof OutOfMemoryError) {
                return true;
            }
            c = c.getCause();
        }
        return false;
    }
}
