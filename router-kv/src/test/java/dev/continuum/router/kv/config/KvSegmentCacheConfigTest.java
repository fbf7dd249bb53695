package dev.continuum.router.kv.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.LoadResult;
import dev.continuum.router.core.config.Problem;
import dev.continuum.router.core.config.ReloadClass;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code dynamo.kv.segment_cache_bytes}, {@code render_cache_bytes} and {@code block_hash_cache_bytes}: bounds,
 * validated with their paths, applied on reload.
 */
class KvSegmentCacheConfigTest {
    private static final KvSection SECTION = new KvSection();
    private static final String BACKEND = "backends: [{name: a, url: \"http://127.0.0.1:8000\"}]\n";

    private static LoadResult load(String dynamoYaml) {
        return ConfigLoader.builder().dynamoSection(SECTION).build().loadString(BACKEND + dynamoYaml);
    }

    private static List<String> errors(String yaml) {
        return load("dynamo:\n  kv: " + yaml + "\n").errors().stream().map(Problem::toString).toList();
    }

    @Test
    void bindsByteSizesWithTheirDefaults() {
        KvConfig d = load("").orThrow().dynamo().section(SECTION);
        assertThat(d.segmentCacheBytes()).as("64 MiB by default").isEqualTo(64L << 20);
        assertThat(d.renderCacheBytes()).isEqualTo(64L << 20);
        assertThat(d.blockHashCacheBytes()).isEqualTo(16L << 20);
        KvConfig set = load("dynamo: {kv: {render_cache_bytes: 1MiB, block_hash_cache_bytes: 0}}").orThrow().dynamo()
                .section(SECTION);
        assertThat(set.renderCacheBytes()).isEqualTo(1L << 20);
        assertThat(set.blockHashCacheBytes()).as("0 turns the cache off").isZero();
        assertThat(load("dynamo: {kv: {segment_cache_bytes: 1GiB}}").orThrow().dynamo().section(SECTION)
                .segmentCacheBytes()).isEqualTo(1L << 30);
        assertThat(load("dynamo: {kv: {segment_cache_bytes: 0}}").orThrow().dynamo().section(SECTION)
                .segmentCacheBytes()).as("0 turns the cache off").isZero();
    }

    @Test
    void refusesSizesOutsideTheRangeNamingTheField() {
        assertThat(errors("{segment_cache_bytes: 17GiB}")).singleElement().asString()
                .startsWith("dynamo.kv.segment_cache_bytes: ").contains("a byte size from 0 to 16GiB");
        assertThat(errors("{segment_cache_bytes: lots}")).singleElement().asString()
                .startsWith("dynamo.kv.segment_cache_bytes: ");
        assertThat(errors("{render_cache_bytes: 17GiB}")).singleElement().asString()
                .startsWith("dynamo.kv.render_cache_bytes: ").contains("a byte size from 0 to 16GiB");
        assertThat(errors("{block_hash_cache_bytes: -1}")).singleElement().asString()
                .startsWith("dynamo.kv.block_hash_cache_bytes: ");
    }

    @Test
    void aChangedBoundAppliesImmediately() {
        KvConfig before = load("").orThrow().dynamo().section(SECTION);
        KvConfig after = load("dynamo: {kv: {segment_cache_bytes: 8MiB}}").orThrow().dynamo().section(SECTION);
        assertThat(SECTION.reloadClass(before, after)).isEqualTo(ReloadClass.IMMEDIATE);
        KvConfig smaller = load("dynamo: {kv: {render_cache_bytes: 1MiB, block_hash_cache_bytes: 1MiB}}").orThrow()
                .dynamo().section(SECTION);
        assertThat(SECTION.reloadClass(before, smaller)).isEqualTo(ReloadClass.IMMEDIATE);
    }
}
