package dev.continuum.router.kv.config;

import dev.continuum.router.core.config.ByteSize;
import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.DynamoSection;
import dev.continuum.router.core.config.Problems;
import dev.continuum.router.core.config.ReloadClass;
import dev.continuum.router.core.config.RouterConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Binds and validates {@code dynamo.kv}:
 *
 * <pre>
 * dynamo:
 *   kv:
 *     enabled: false
 *     allow_http_artifacts: true          # fetch http(s):// card paths
 *     allow_hf_artifacts: false           # fetch hf:// card paths from the Hub (HF_ENDPOINT, HF_TOKEN)
 *     pinned_artifacts: ["blake3:&lt;64 lowercase hex&gt;"]   # up to 1024; nothing is loaded unless pinned
 *     artifact_cache_dir: /var/cache/continuum-router/artifacts
 *     send_token_data: false
 *     overlap_score_credit: 1.0           # 0..1e6   (the KV-aware picker's formula, docs/kv-routing.md)
 *     prefill_load_scale: 1.0             # 0..1e6
 *     router_temperature: 0.0             # 0..100
 *     conditional_disaggregation: {enabled: false, decode_busy_threshold: 0.9}   # threshold 0..1
 *     mode: auto                          # precise | approximate | auto
 *     predicted_ttl: 5s                   # 0..1h, 0: no prediction where kv-events run
 *     approximate_ttl: 120s               # 1s..1h
 *     segment_cache_bytes: 64MiB          # 0..16GiB; the prompt token-ID segment cache, 0 turns it off
 *     render_cache_bytes: 64MiB           # 0..16GiB; rendered conversation prefixes (render once), 0 turns it off
 *     block_hash_cache_bytes: 16MiB       # 0..16GiB; block hashes by conversation prefix, 0 turns it off
 * </pre>
 *
 * Every key applies immediately on reload (the next request and the next artifact pass see it), without
 * touching discovery or the registry.
 */
public final class KvSection implements DynamoSection<KvConfig> {
    private static final Pattern CHECKSUM = Pattern.compile("blake3:[0-9a-f]{64}");
    static final String DIRECT_MODE_BYPASS = "a dynamo.frontend in --router-mode direct refuses a request without a "
            + "prefill pin while prefill workers are registered (503 disaggregated_prefill_decode_unavailable)";

    @Override
    public String key() {
        return "kv";
    }

    @Override
    public Class<KvConfig> type() {
        return KvConfig.class;
    }

    @Override
    public KvConfig defaults() {
        return KvConfig.DEFAULTS;
    }

    @Override
    public @Nullable KvConfig bind(ConfigNode node, Problems problems) {
        KvConfig d = KvConfig.DEFAULTS;
        boolean enabled = node.bool("enabled", d.enabled());
        boolean http = node.bool("allow_http_artifacts", d.allowHttpArtifacts());
        boolean hf = node.bool("allow_hf_artifacts", d.allowHfArtifacts());
        List<String> pins = pins(node.get("pinned_artifacts"));
        String cacheDir = cacheDir(node.get("artifact_cache_dir"));
        boolean sendTokenData = node.bool("send_token_data", d.sendTokenData());
        double credit = bounded(node.get("overlap_score_credit"), d.overlapScoreCredit(), KvConfig.MAX_SCALE);
        double scale = bounded(node.get("prefill_load_scale"), d.prefillLoadScale(), KvConfig.MAX_SCALE);
        double temperature = bounded(node.get("router_temperature"), d.routerTemperature(), KvConfig.MAX_TEMPERATURE);
        ConfigNode cd = node.get("conditional_disaggregation");
        boolean cdEnabled = cd.bool("enabled", false);
        ConfigNode thresholdNode = cd.get("decode_busy_threshold");
        Double threshold = thresholdNode.isPresent() ? bounded(thresholdNode, 1.0, 1.0) : null;
        if (cdEnabled) {
            cd.get("enabled").warning(DIRECT_MODE_BYPASS);
        }
        long segmentCache = cacheBytes(node.get("segment_cache_bytes"), KvConfig.DEFAULT_SEGMENT_CACHE_BYTES);
        long renderCache = cacheBytes(node.get("render_cache_bytes"), KvConfig.DEFAULT_RENDER_CACHE_BYTES);
        long blockHashCache = cacheBytes(node.get("block_hash_cache_bytes"),
                KvConfig.DEFAULT_BLOCK_HASH_CACHE_BYTES);
        KvConfig.Mode mode = node.get("mode").asChoice(d.mode(), KvConfig.Mode::parse,
                "precise, approximate or auto");
        Duration predictedTtl = node.get("predicted_ttl").asDuration(d.predictedTtl(), Duration.ZERO,
                KvConfig.MAX_TTL);
        Duration approximateTtl = node.get("approximate_ttl").asDuration(d.approximateTtl(), Duration.ofSeconds(1),
                KvConfig.MAX_TTL);
        return new KvConfig(enabled, http, hf, pins, cacheDir, sendTokenData, credit, scale, temperature,
                new KvConfig.ConditionalDisaggregation(cdEnabled, threshold), mode, predictedTtl, approximateTtl,
                segmentCache, renderCache, blockHashCache);
    }

    private static List<String> pins(ConfigNode node) {
        if (!node.isPresent()) {
            return List.of();
        }
        if (node.kind() != ConfigNode.Kind.LIST) {
            node.invalid("a list of \"blake3:<64 lowercase hex>\" checksums");
            return List.of();
        }
        List<ConfigNode> elements = node.elements();
        if (elements.size() > KvConfig.MAX_PINNED_ARTIFACTS) {
            node.error(elements.size() + " entries (expected: at most " + KvConfig.MAX_PINNED_ARTIFACTS + ")");
            return List.of();
        }
        LinkedHashSet<String> pins = new LinkedHashSet<>();
        for (ConfigNode element : elements) {
            String text = element.asStringOrNull();
            if (text == null || !CHECKSUM.matcher(text).matches()) {
                element.invalid("\"blake3:\" and 64 lowercase hex digits, as b3sum prints them");
                continue;
            }
            pins.add(text);
        }
        return new ArrayList<>(pins);
    }

    /** A byte size ({@code 64MiB}, {@code 1GiB}, a plain number of bytes) in {@code 0..16GiB}. */
    private static long cacheBytes(ConfigNode node, long fallback) {
        if (!node.isPresent()) {
            return fallback;
        }
        long v = node.asByteSize(new ByteSize(fallback)).bytes();
        if (v < 0 || v > KvConfig.MAX_SEGMENT_CACHE_BYTES) {
            node.invalid("a byte size from 0 to 16GiB");
            return fallback;
        }
        return v;
    }

    private static @Nullable String cacheDir(ConfigNode node) {
        if (!node.isPresent()) {
            return null;
        }
        String dir = node.asStringOrNull();
        if (dir == null || dir.isBlank() || dir.indexOf('\0') >= 0) {
            node.invalid("a directory path");
            return null;
        }
        return dir;
    }

    /** A finite number in {@code 0..max}; NaN and infinities are refused like any out-of-range value. */
    private static double bounded(ConfigNode node, double defaultValue, double max) {
        if (!node.isPresent()) {
            return defaultValue;
        }
        double v = node.asDouble(defaultValue);
        if (!(v >= 0 && v <= max)) {
            node.invalid("a number from 0 to " + (max == Math.rint(max) ? Long.toString((long) max) : max));
            return defaultValue;
        }
        return v;
    }

    @Override
    public void crossCheck(KvConfig value, RouterConfig config, Problems problems) {
        if (value.enabled() && value.pinnedArtifacts().isEmpty()) {
            problems.warning("dynamo.kv.pinned_artifacts", "empty while dynamo.kv.enabled is true: no tokenizer "
                    + "or template is loaded, so no request is encoded (list the reviewed checksums)");
        }
    }

    /** Every key is read per request or per artifact pass. */
    @Override
    public ReloadClass reloadClass(KvConfig before, KvConfig after) {
        return ReloadClass.IMMEDIATE;
    }
}
