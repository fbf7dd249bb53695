package dev.continuum.router.core.config;

/**
 * A size in bytes read from configuration as {@code 1048576}, {@code "512KiB"}, {@code "10MiB"},
 * {@code "1MB"}; shown back in the largest binary unit that divides it exactly.
 */
public record ByteSize(long bytes) {
    public ByteSize {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes: " + bytes + " (expected: >= 0)");
        }
    }

    public static ByteSize ofKiB(long kib) {
        return new ByteSize(kib * 1024);
    }

    public static ByteSize ofMiB(long mib) {
        return new ByteSize(mib * 1024 * 1024);
    }

    /** Saturates at {@link Integer#MAX_VALUE}, for APIs that size buffers with an int. */
    public int toIntSaturated() {
        return (int) Math.min(bytes, Integer.MAX_VALUE);
    }

    @Override
    public String toString() {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        long v = bytes;
        int unit = 0;
        while (unit < units.length - 1 && v != 0 && v % 1024 == 0) {
            v /= 1024;
            unit++;
        }
        return v + units[unit];
    }
}
