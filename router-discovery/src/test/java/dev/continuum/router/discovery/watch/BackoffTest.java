package dev.continuum.router.discovery.watch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.config.BackoffConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(10)
class BackoffTest {
    /**
     * initial, max, how long each ended pass had all watches open (ms, space separated), the delays chosen
     * (ms, space separated).
     */
    @ParameterizedTest(name = "[{0}..{1}] after passes open for [{2}] waits [{3}]")
    @CsvSource({
            // Failing passes double the delay up to max.
            "500, 30000, 0 0 0 0 0 0 0 0, 500 1000 2000 4000 8000 16000 30000 30000",
            // Watches that close at once (an etcd proxy that answers gets only) never reset the delay.
            "500, 30000, 10 10 10 10, 500 1000 2000 4000",
            // Open for less than max does not reset either, even when long.
            "500, 30000, 0 0 0 29999, 500 1000 2000 4000",
            // Open for at least max resets to initial, then doubles again.
            "500, 30000, 0 0 0 30000 0, 500 1000 2000 500 1000",
            "500, 30000, 0 0 0 600000, 500 1000 2000 500",
            // initial equal to max.
            "1000, 1000, 0 0 5000, 1000 1000 1000",
            // A max that is not a power-of-two multiple of initial caps exactly.
            "300, 1000, 0 0 0 0, 300 600 1000 1000"})
    void theDelayDoublesAndResetsOnlyAfterWatchesStayedOpenForMax(long initial, long max, String openFor,
                                                                   String expected) {
        Backoff backoff = new Backoff(new BackoffConfig(Duration.ofMillis(initial), Duration.ofMillis(max)));
        List<Long> delays = new ArrayList<>();
        for (String open : openFor.split(" ")) {
            delays.add(backoff.afterPass(Duration.ofMillis(Long.parseLong(open))).toMillis());
        }
        assertThat(delays).containsExactlyElementsOf(Arrays.stream(expected.split(" ")).map(Long::parseLong).toList());
    }
}
