package dev.continuum.router.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.LoadResult;
import dev.continuum.router.core.config.Problem;
import dev.continuum.router.core.config.ReloadClass;
import dev.continuum.router.shim.decisions.DecisionRecord;
import dev.continuum.router.shim.decisions.DecisionSettings;
import dev.continuum.router.shim.decisions.RankTerms;
import dev.continuum.router.shim.decisions.DecisionsSection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code dynamo.decisions}: defaults, a valid block, and every bad value named by its field path. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class DecisionsSectionTest {
    private static final DecisionsSection SECTION = new DecisionsSection();

    private static LoadResult load(String yaml) {
        return ConfigLoader.builder().environment(Map.of()).dynamoSection(SECTION).build().loadString(yaml);
    }

    private static List<String> errors(String yaml) {
        return load(yaml).errors().stream().map(Problem::toString).toList();
    }

    @Test
    void defaultsAndAValidBlock() {
        assertThat(load("").orThrow().dynamo().section(SECTION)).isEqualTo(DecisionSettings.DEFAULTS);
        DecisionSettings s = load("dynamo: {decisions: {enabled: false, max_records: 1024, max_bytes: 8MiB}}")
                .orThrow().dynamo().section(SECTION);
        assertThat(s).isEqualTo(new DecisionSettings(false, 1024, 8L * 1024 * 1024));
        assertThat(s.candidatesPerRecord()).isEqualTo((8192 - DecisionRecord.BASE_BYTES) / RankTerms.ESTIMATED_BYTES);
        assertThat(SECTION.reloadClass(DecisionSettings.DEFAULTS, s)).isEqualTo(ReloadClass.IMMEDIATE);
        assertThat(s.candidatesPerPhase()).isEqualTo(DecisionSettings.DEFAULT_CANDIDATES);
        DecisionSettings k = load("dynamo: {decisions: {candidates_per_phase: 0}}").orThrow().dynamo().section(SECTION);
        assertThat(k.candidatesPerPhase()).isZero();
        assertThat(load("dynamo: {decisions: {candidates_per_phase: 64}}").orThrow().dynamo().section(SECTION)
                .candidatesPerPhase()).isEqualTo(64);
        assertThat(SECTION.reloadClass(DecisionSettings.DEFAULTS, k)).isEqualTo(ReloadClass.IMMEDIATE);
    }

    @Test
    void theDefaultRingStaysFarBelow64MiB() {
        DecisionSettings d = DecisionSettings.DEFAULTS;
        long perRecord = Math.min(d.bytesPerRecord(), DecisionRecord.BASE_BYTES
                + 2L * (d.candidatesPerPhase() + 1) * RankTerms.ESTIMATED_BYTES);
        assertThat(perRecord).isEqualTo(2_912);
        assertThat(d.maxRecords() * perRecord).isLessThanOrEqualTo(d.maxBytes()).isLessThan(64L << 20);
    }

    @Test
    void badValuesAreErrorsAtTheirPath() {
        assertThat(errors("dynamo: {decisions: {max_records: 8}}"))
                .anyMatch(e -> e.startsWith("dynamo.decisions.max_records"));
        assertThat(errors("dynamo: {decisions: {max_bytes: 2GiB}}"))
                .anyMatch(e -> e.startsWith("dynamo.decisions.max_bytes") && e.contains("64KiB to 1GiB"));
        assertThat(errors("dynamo: {decisions: {max_records: 1048576, max_bytes: 64MiB}}"))
                .anyMatch(e -> e.startsWith("dynamo.decisions.max_bytes") && e.contains("bytes per record"));
        assertThat(errors("dynamo: {decisions: {candidates_per_phase: 65}}"))
                .anyMatch(e -> e.startsWith("dynamo.decisions.candidates_per_phase"));
        assertThat(errors("dynamo: {decisions: {candidates_per_phase: -1}}"))
                .anyMatch(e -> e.startsWith("dynamo.decisions.candidates_per_phase"));
        assertThat(errors("dynamo: {decisions: {enabled: maybe}}"))
                .anyMatch(e -> e.startsWith("dynamo.decisions.enabled"));
    }
}
