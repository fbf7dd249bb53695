package dev.continuum.router.kv.selection;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.kv.backend.BackendKvIndex;
import dev.continuum.router.proxy.BackendChooser;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The cost formula of docs/kv-routing.md, "Use in selection", on a real index. */
class BackendKvScorerTest {
    private record Candidate(String name, int inFlight) implements BackendChooser.Candidate {
    }

    private static final long[] PROMPT = {11, 12, 13, 14, 15, 16, 17, 18, 19, 20};

    private final BackendKvIndex index = new BackendKvIndex();
    private final BackendKvScorer scorer = new BackendKvScorer(index);
    private final Long[] keys = BackendKvIndex.keys(PROMPT);

    private int choose(Candidate... candidates) {
        return (int) scorer.choose(List.of(candidates), keys, 1.0, 1.0);
    }

    private static long cached(long choice) {
        return choice >>> 32;
    }

    @Test
    void anIdleHolderWinsAndAnIdleFleetGoesRoundInTurn() {
        index.store("a", Arrays.copyOf(PROMPT, 6), 1000);
        Candidate a = new Candidate("a", 0);
        Candidate b = new Candidate("b", 0);
        long choice = scorer.choose(List.of(b, a), keys, 1.0, 1.0);
        assertThat((int) choice).isEqualTo(1);
        assertThat(cached(choice)).isEqualTo(6);
        // Nobody holds anything of another prompt: equal costs, so the start moves round.
        Long[] other = BackendKvIndex.keys(new long[] {99, 98});
        int first = (int) scorer.choose(List.of(a, b), other, 1.0, 1.0);
        int second = (int) scorer.choose(List.of(a, b), other, 1.0, 1.0);
        assertThat(first).isNotEqualTo(second);
    }

    /**
     * A request in flight stands for the uncached blocks of the requests recently sent to that backend: a holder
     * whose requests were mostly cached keeps the prefix with one in flight, where counting it as a whole prompt
     * sent every follow-up to an idle backend.
     */
    @Test
    void aBusyHolderKeepsThePrefixWhileItsRequestsInFlightAreMostlyCached() {
        index.store("holder", Arrays.copyOf(PROMPT, 8), 1000);
        index.store("other", new long[] {500}, 1000); // tracked, holds nothing of the prompt
        Candidate idleHolder = new Candidate("holder", 0);
        Candidate idleOther = new Candidate("other", 0);
        // Three requests sent to the holder, each with 2 of 10 blocks uncached: its average becomes 2.
        for (int i = 0; i < 3; i++) {
            assertThat(choose(idleOther, idleHolder)).isEqualTo(1);
        }
        // One in flight on the holder: 2 uncached + 1 x 2 = 4 against 10 on the idle other.
        assertThat(choose(new Candidate("other", 0), new Candidate("holder", 1))).isEqualTo(1);
        // Four in flight: 2 + 4 x 2 = 10 against 10, a tie that goes to the larger prefix.
        assertThat(choose(new Candidate("other", 0), new Candidate("holder", 4))).isEqualTo(1);
        // Five: 12 against 10, the idle one.
        assertThat(choose(new Candidate("other", 0), new Candidate("holder", 5))).isEqualTo(0);
    }

    @Test
    void beforeAnyRequestARequestInFlightCountsAsAPromptOfThisSize() {
        index.store("holder", Arrays.copyOf(PROMPT, 8), 1000);
        // No average yet: 2 + 1 x 10 = 12 against 10 on a candidate without a source.
        assertThat(choose(new Candidate("plain", 0), new Candidate("holder", 1))).isEqualTo(0);
    }

    /** The index gives a departed backend's slot to the next one: the newcomer starts without the old average. */
    @Test
    void aBackendTakingAFreedSlotDoesNotInheritItsAverage() {
        index.store("holder", Arrays.copyOf(PROMPT, 8), 1000);
        for (int i = 0; i < 3; i++) {
            assertThat(choose(new Candidate("plain", 0), new Candidate("holder", 0))).isEqualTo(1); // average 2
        }
        int slot = index.slot("holder");
        index.clear("holder");
        index.store("newcomer", Arrays.copyOf(PROMPT, 8), 1000);
        assertThat(index.slot("newcomer")).as("the freed slot").isEqualTo(slot);
        // The holder's average would make it 2 + 1 x 2 = 4 against 10; without one it is 2 + 1 x 10 = 12.
        assertThat(choose(new Candidate("plain", 0), new Candidate("newcomer", 1))).isEqualTo(0);
        // Its own first request starts its average: 2 uncached blocks, so one in flight is 4 against 10 again.
        assertThat(choose(new Candidate("plain", 0), new Candidate("newcomer", 0))).isEqualTo(1);
        assertThat(choose(new Candidate("plain", 0), new Candidate("newcomer", 1))).isEqualTo(1);
    }
}
