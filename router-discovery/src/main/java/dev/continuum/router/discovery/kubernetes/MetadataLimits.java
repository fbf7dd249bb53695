package dev.continuum.router.discovery.kubernetes;

/**
 * Bounds of the metadata source on top of the reducer's own (16384 keys per keyspace, 16 MiB per record).
 *
 * @param resourcePageSize DynamoWorkerMetadata per list page (32: each can carry megabytes of cards)
 * @param slicePageSize    EndpointSlices per list page (500)
 * @param maxResources     resources held (16384); more are refused and counted {@code malformed}
 * @param maxSlices        EndpointSlices held (16384)
 * @param maxRecordBytes   record bytes held over all resources (256 MiB)
 * @param maxCardBytes     a {@code card_json} above this (1 MiB) is trimmed to the fields the router reads
 */
public record MetadataLimits(int resourcePageSize, int slicePageSize, int maxResources, int maxSlices,
                             long maxRecordBytes, int maxCardBytes) {
    public static final int RESOURCE_PAGE_SIZE = 32;
    public static final int SLICE_PAGE_SIZE = 500;
    public static final int MAX_RESOURCES = 16_384;
    public static final long MAX_HELD_RECORD_BYTES = 256L << 20;
    public static final int MAX_CARD_BYTES = 1 << 20;

    public MetadataLimits {
        if (resourcePageSize < 1 || slicePageSize < 1 || maxResources < 1 || maxSlices < 1 || maxRecordBytes < 1
                || maxCardBytes < 1) {
            throw new IllegalArgumentException("every MetadataLimits bound must be positive");
        }
    }

    public static MetadataLimits defaults() {
        return new MetadataLimits(RESOURCE_PAGE_SIZE, SLICE_PAGE_SIZE, MAX_RESOURCES, MAX_RESOURCES,
                MAX_HELD_RECORD_BYTES, MAX_CARD_BYTES);
    }
}
