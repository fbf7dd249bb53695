package dev.continuum.router.kv.artifacts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The official BLAKE3 test vectors (BLAKE3-team/BLAKE3, test_vectors/test_vectors.json: input bytes
 * {@code i % 251}, the first 32 bytes of the {@code hash} output) as the independent reference, since Debian
 * ships no Python BLAKE3.
 */
class Blake3Test {
    @ParameterizedTest
    @CsvSource({
            "0, af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262",
            "1, 2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213",
            "1023, 10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11",
            "1024, 42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7",
            "1025, d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444",
            "2049, 5f4d72f40d7a5f82b15ca2b2e44b1de3c2ef86c426c95c1af0b6879522563030",
            "7169, a003fc7a51754a9b3c7fae0367ab3d782dccf28855a03d435f8cfe74605e7817"})
    void matchesTheOfficialVectors(int length, String expected) throws Exception {
        byte[] input = new byte[length];
        for (int i = 0; i < length; i++) {
            input[i] = (byte) (i % 251);
        }

        assertThat(Blake3.hex(input)).isEqualTo(expected);
        assertThat(Blake3.hex(new ByteArrayInputStream(input), length)).isEqualTo(expected);
        if (length > 0) {
            assertThatThrownBy(() -> Blake3.hex(new ByteArrayInputStream(input), length - 1))
                    .isInstanceOf(Blake3.TooLarge.class);
        }
    }
}
