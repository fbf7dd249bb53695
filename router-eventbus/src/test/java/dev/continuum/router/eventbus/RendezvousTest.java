package dev.continuum.router.eventbus;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Rendezvous weights against Python's hashlib (an independent SHA-256 and byte layout), determinism, even spread,
 * and minimal movement when a broker leaves.
 */
class RendezvousTest {
    private static final List<String> BROKERS = List.of("broker-a", "broker-b", "broker-c", "broker-d");

    private static String key(int i) {
        return Rendezvous.key(new SubscribeTarget.ZmqTcp("dynamo", "10.0.0." + (i % 250), 40000 + i), "kv_metrics");
    }

    private static String winner(String key, List<String> brokers) {
        String best = brokers.get(0);
        for (String b : brokers) {
            long w = Rendezvous.weight(key, b);
            long bw = Rendezvous.weight(key, best);
            if (Long.compareUnsigned(w, bw) > 0) {
                best = b;
            }
        }
        return best;
    }

    @Test
    void weightsMatchPythonHashlib() throws IOException, InterruptedException {
        String script = String.join("\n",
                "import hashlib, struct, sys",
                "for line in sys.stdin.read().split('\\x00'):",
                "    if not line: continue",
                "    key, cid = line.split('\\x01')",
                "    k = key.encode('utf-8')",
                "    d = hashlib.sha256(struct.pack('>Q', len(k)) + k + cid.encode('utf-8')).digest()",
                "    print(struct.unpack('>Q', d[:8])[0])");
        Process python = new ProcessBuilder("python3", "-c", script).redirectErrorStream(true).start();
        List<String[]> cases = new ArrayList<>();
        StringBuilder input = new StringBuilder();
        for (int i = 0; i < 20; i++) {
            String[] c = {key(i), BROKERS.get(i % 4)};
            cases.add(c);
            input.append(c[0]).append('\u0001').append(c[1]).append('\u0000');
        }
        cases.add(new String[] {"ns-é\nhost\n1\nkv_metrics", "client.ü"}); // UTF-8 beyond ASCII
        input.append("ns-é\nhost\n1\nkv_metrics").append('\u0001').append("client.ü").append('\u0000');
        python.getOutputStream().write(input.toString().getBytes(StandardCharsets.UTF_8));
        python.getOutputStream().close();
        List<String> out = new String(python.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        assertThat(python.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(out).hasSize(cases.size());
        for (int i = 0; i < cases.size(); i++) {
            assertThat(Long.toUnsignedString(Rendezvous.weight(cases.get(i)[0], cases.get(i)[1])))
                    .as("case %d", i).isEqualTo(out.get(i));
        }
    }

    @Test
    void spreadsStreamsEvenlyAndMovesOnlyTheLeaversStreams() {
        Map<String, Integer> load = new HashMap<>();
        Map<Integer, String> placed = new HashMap<>();
        for (int i = 0; i < 4000; i++) {
            String w = winner(key(i), BROKERS);
            placed.put(i, w);
            load.merge(w, 1, Integer::sum);
        }
        // 1/N each within a few percent: 4000 keys, 1000 expected per broker.
        assertThat(load.values()).allSatisfy(n -> assertThat(n).isBetween(880, 1120));

        List<String> without = List.of("broker-a", "broker-b", "broker-d");
        for (int i = 0; i < 4000; i++) {
            String after = winner(key(i), without);
            if (!placed.get(i).equals("broker-c")) {
                assertThat(after).as("key %d kept its broker", i).isEqualTo(placed.get(i));
            }
        }
    }

    @Test
    void theSameKeyRanksTheSameWayEveryTime() {
        String k = key(7);
        long first = Rendezvous.weight(k, "broker-a");
        for (int i = 0; i < 10; i++) {
            assertThat(Rendezvous.weight(k, "broker-a")).isEqualTo(first);
        }
        assertThat(Rendezvous.weight(k, "broker-b")).isNotEqualTo(first);
        assertThat(Rendezvous.weight(key(8), "broker-a")).isNotEqualTo(first);
    }
}
