package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class AvoidablePairingTest {

    @Test
    void pairsScoredRequestsAndPutsEachDifferenceDownToItsCause() {
        AvoidableTokens sim = new AvoidableTokens();
        sim.served(1, new AvoidableTokens.Served(1024, 1024, 0, 1100)); // both count it
        sim.served(2, new AvoidableTokens.Served(512, 512, 0, 600));    // index had not heard: event delay
        sim.served(3, new AvoidableTokens.Served(256, 256, 0, 300));    // index knew, router judged busier
        sim.served(4, new AvoidableTokens.Served(128, 128, 0, 200));    // winner credited with predicted blocks
        sim.served(5, new AvoidableTokens.Served(0, 0, 64, 200));       // router counted a block evicted since
        sim.served(6, new AvoidableTokens.Served(2048, 2048, 0, 2100)); // fallback: no router figure
        sim.served(7, new AvoidableTokens.Served(32, 32, 0, 100));      // the ring dropped its record
        sim.served(-1, new AvoidableTokens.Served(16, 0, 0, 100));      // no decision id
        Map<Long, AvoidablePairing.RouterFigure> router = Map.of(
                1L, new AvoidablePairing.RouterFigure("no_overlap", 1024, 1024, 0),
                2L, new AvoidablePairing.RouterFigure("no_overlap", 0, 0, 0),
                3L, new AvoidablePairing.RouterFigure("no_overlap", 0, 256, 0),
                4L, new AvoidablePairing.RouterFigure("overlap", 0, 128, 128),
                5L, new AvoidablePairing.RouterFigure("overlap", 16, 80, 64),
                6L, new AvoidablePairing.RouterFigure("render_unavailable", 0, 0, 0));

        AvoidablePairing.Report r = AvoidablePairing.pair(sim, router);

        assertThat(r.scored()).isEqualTo(5);
        assertThat(r.router()).isEqualTo(1024 + 16);
        assertThat(r.simulator()).isEqualTo(1024 + 512 + 256 + 128);
        assertThat(r.equal()).isEqualTo(1);
        assertThat(r.indexShortRequests()).isEqualTo(1);
        assertThat(r.indexShortTokens()).isEqualTo(512);
        assertThat(r.judgedBusierTokens()).isEqualTo(256);
        assertThat(r.predictedTokens()).isEqualTo(128);
        assertThat(r.routerAheadRequests()).isEqualTo(1);
        assertThat(r.routerAheadTokens()).isEqualTo(16);
        assertThat(r.unscored()).isEqualTo(1);
        assertThat(r.unscoredSimulator()).isEqualTo(2048);
        assertThat(r.unmatched()).isEqualTo(1);
        assertThat(r.unmatchedSimulator()).isEqualTo(32);
        assertThat(r.noDecisionId()).isEqualTo(new AvoidableTokens.Sum(1, 16, 0));
        assertThat(r.differing()).hasSize(4).first().asString().startsWith("decision 2 (no_overlap)");
    }
}
