package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The simulator's own {@code hash_pod_name}. {@code worker-0} is upstream's check value (kube/utils.rs); the others
 * are the outputs of Rust's std {@code DefaultHasher} (rustc, no crates) recorded in this project's discovery
 * tests: the empty name, names around one 8-byte word, non-ASCII UTF-8 and a 64-byte name.
 */
class PodNamesTest {
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "worker-0|12863466981639851263|1186445869714687",
            "''|3476900567878811119|121655548788207",
            "a|8186225505942432243|7688582637611507",
            "vllm-prefill-0|6147796952224525485|4887060491168941",
            "pod-été|471065711818240363|2691350571708779",
            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef|13404220504113481909|1508013058885813",
    })
    void matchesRustsDefaultHasher(String name, String full, long masked) {
        byte[] text = name.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] message = java.util.Arrays.copyOf(text, text.length + 1);
        message[text.length] = (byte) 0xFF;
        assertThat(Long.toUnsignedString(PodNames.sipHash13(message))).isEqualTo(full);
        assertThat(PodNames.hashPodName(name)).isEqualTo(masked);
    }

    @ParameterizedTest
    @CsvSource({"Dynamo_NS,dynamo-ns", "--a--,a", "'',x", "Qwen/Qwen3-0.6B,qwen-qwen3-0-6b"})
    void dnsLabels(String text, String label) {
        assertThat(PodNames.dns(text, 40)).isEqualTo(label);
    }
}
