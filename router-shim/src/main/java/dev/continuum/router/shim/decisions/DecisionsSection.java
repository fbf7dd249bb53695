package dev.continuum.router.shim.decisions;

import dev.continuum.router.core.config.ByteSize;
import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.DynamoSection;
import dev.continuum.router.core.config.Problems;
import dev.continuum.router.core.config.ReloadClass;

/**
 * Binds and validates {@code dynamo.decisions}:
 *
 * <pre>
 * dynamo:
 *   decisions:
 *     enabled: true        # record every routed request and send x-continuum-decision-id
 *     max_records: 2048    # 16 .. 1048576 newest records kept
 *     max_bytes: 8MiB      # 64KiB .. 1GiB for the whole ring; bounds each record's candidate list
 *     candidates_per_phase: 8  # 0 .. 64 cheapest eligible candidates a phase keeps besides its winner
 * </pre>
 *
 * Every key applies to the next request; a new {@code max_records} starts an empty ring.
 */
public final class DecisionsSection implements DynamoSection<DecisionSettings> {
    @Override
    public String key() {
        return "decisions";
    }

    @Override
    public Class<DecisionSettings> type() {
        return DecisionSettings.class;
    }

    @Override
    public DecisionSettings defaults() {
        return DecisionSettings.DEFAULTS;
    }

    @Override
    public DecisionSettings bind(ConfigNode node, Problems problems) {
        DecisionSettings d = DecisionSettings.DEFAULTS;
        boolean enabled = node.bool("enabled", d.enabled());
        int records = node.get("max_records").asInt(d.maxRecords(), DecisionSettings.MIN_RECORDS,
                DecisionSettings.MAX_RECORDS);
        ConfigNode bytesNode = node.get("max_bytes");
        long bytes = bytesNode.asByteSize(new ByteSize(d.maxBytes())).bytes();
        if (bytes < DecisionSettings.MIN_BYTES || bytes > DecisionSettings.MAX_BYTES) {
            bytesNode.invalid("a size from 64KiB to 1GiB");
            bytes = d.maxBytes();
        }
        int candidates = node.get("candidates_per_phase").asInt(d.candidatesPerPhase(), 0,
                DecisionSettings.MAX_CANDIDATES);
        if (bytes / records < DecisionRecord.BASE_BYTES + 2L * RankTerms.ESTIMATED_BYTES) {
            bytesNode.invalid("at least " + (DecisionRecord.BASE_BYTES + 2L * RankTerms.ESTIMATED_BYTES)
                    + " bytes per record (max_bytes / max_records)");
            return d;
        }
        return new DecisionSettings(enabled, records, bytes, candidates);
    }

    @Override
    public ReloadClass reloadClass(DecisionSettings before, DecisionSettings after) {
        return ReloadClass.IMMEDIATE;
    }
}
