package dev.continuum.router.core.config;

/**
 * One validation finding, printed as {@code path: message}. Messages follow the one shape
 * {@code value (expected: ...)}, for example
 * {@code dynamo.discovery.etcd.endpoints[1]: "****@h:2379" (expected: no credentials in the URL)}.
 *
 * @param path dotted path with list indexes ({@code backends[2].url}); empty for the document root
 */
public record Problem(Severity severity, String path, String message) {
    public enum Severity {
        ERROR,
        WARNING
    }

    @Override
    public String toString() {
        return (path.isEmpty() ? "<root>" : path) + ": " + message;
    }
}
