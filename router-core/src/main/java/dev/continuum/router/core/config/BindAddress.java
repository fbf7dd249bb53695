package dev.continuum.router.core.config;

import java.nio.file.Path;

/** One listener from {@code server.bind_address}: a TCP {@code host:port} or a {@code unix:/path} socket. */
public sealed interface BindAddress {
    record Tcp(String host, int port) implements BindAddress {
        public Tcp {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port: " + port + " (expected: 0..65535)");
            }
        }

        @Override
        public String toString() {
            return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
        }
    }

    record Unix(Path path) implements BindAddress {
        @Override
        public String toString() {
            return "unix:" + path;
        }
    }
}
