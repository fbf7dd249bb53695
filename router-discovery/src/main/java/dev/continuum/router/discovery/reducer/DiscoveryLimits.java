package dev.continuum.router.discovery.reducer;

/**
 * Compiled-in bounds on fleet-authored input: every value under the watched prefixes is written by the
 * fleet, so the reducer treats it as untrusted.
 *
 * @param maxRecordBytes        values above this are refused before parsing
 * @param maxRetainedCardBytes  the verbatim card kept beside the typed subset is dropped above this
 * @param maxRecordsPerKeyspace distinct keys held per keyspace; at capacity existing keys still update
 */
public record DiscoveryLimits(int maxRecordBytes, int maxRetainedCardBytes, int maxRecordsPerKeyspace) {
    /** An order of magnitude above etcd's default 1.5 MiB {@code --max-request-bytes}. */
    public static final int MAX_RECORD_BYTES = 16 * 1024 * 1024;
    public static final int MAX_RETAINED_CARD_BYTES = 1024 * 1024;
    public static final int MAX_RECORDS_PER_KEYSPACE = 16_384;

    private static final DiscoveryLimits DEFAULTS =
            new DiscoveryLimits(MAX_RECORD_BYTES, MAX_RETAINED_CARD_BYTES, MAX_RECORDS_PER_KEYSPACE);

    public DiscoveryLimits {
        checkPositive("maxRecordBytes", maxRecordBytes);
        checkPositive("maxRetainedCardBytes", maxRetainedCardBytes);
        checkPositive("maxRecordsPerKeyspace", maxRecordsPerKeyspace);
    }

    public static DiscoveryLimits defaults() {
        return DEFAULTS;
    }

    private static void checkPositive(String name, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
        }
    }
}
