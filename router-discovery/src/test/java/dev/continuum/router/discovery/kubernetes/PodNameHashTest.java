package dev.continuum.router.discovery.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code hash_pod_name} against Rust's own {@code DefaultHasher}.
 *
 * <p>{@code worker-0} is upstream's vector (Dynamo's {@code lib/runtime/src/discovery/kube/utils.rs}). The
 * others were computed with rustc 1.95.0 and std only, by this program:
 * <pre>
 * use std::collections::hash_map::DefaultHasher;
 * use std::hash::{Hash, Hasher};
 * fn main() {
 *     for n in [NAMES] {
 *         let mut h = DefaultHasher::new();
 *         n.hash(&amp;mut h);                        // str::hash: the bytes, then 0xFF
 *         let full = h.finish();
 *         println!("{:?} {} {}", n, full, full &amp; 0x001F_FFFF_FFFF_FFFF);
 *     }
 * }
 * </pre>
 * They cover the empty name (a single suffix byte), names shorter than, equal to and longer than one 8-byte
 * word once the suffix is added ({@code worker-0} plus 0xFF is 9 bytes), non-ASCII UTF-8, and a 64-byte name.
 * The full 64-bit value is checked too, so a masking mistake cannot hide a hashing mistake. The suite does not
 * run rustc: Rust does not promise {@code DefaultHasher} stays SipHash-1-3, and a change there would be an
 * upstream incompatibility to notice in Dynamo's release notes, not a reason for this build to need a compiler.
 */
@Timeout(10)
class PodNameHashTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "worker-0|12863466981639851263|1186445869714687",
            "''|3476900567878811119|121655548788207",
            "a|8186225505942432243|7688582637611507",
            "worker-1|16750551406947868958|6167992384364830",
            "vllm-prefill-0|6147796952224525485|4887060491168941",
            "vllm-decode-7f9c8b6d5-x2k4p|9922218852944471432|5292473474639240",
            "dynamo-solar-pro4-vllmworker-decodeheavy-6d8f7c9b4-q7lzt|5860292986762410666|5613471180765866",
            "pod-été|471065711818240363|2691350571708779",
            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef|13404220504113481909|1508013058885813",
    })
    void matchesRustsDefaultHasher(String name, String fullUnsigned, long masked) {
        byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        assertThat(Long.toUnsignedString(PodNameHash.sipHash13ZeroKeys(bytes, 0xFF))).isEqualTo(fullUnsigned);
        assertThat(PodNameHash.hashPodName(name)).isEqualTo(masked);
    }

    @Test
    void upstreamVectorInHexAsTheRegistryStoresIt() {
        long id = PodNameHash.hashPodName("worker-0");
        assertThat(id).isEqualTo(1186445869714687L);
        assertThat(Long.toHexString(id)).isEqualTo("43710f49c0cff");
        assertThat(id & ~PodNameHash.ID_MASK).isZero();
    }
}
