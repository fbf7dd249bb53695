package dev.continuum.router.load.wire;

import dev.continuum.router.eventplane.wire.Decoded;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every u64 field of {@code ActiveLoad} over its whole range, encoded by an independent encoder (Debian's
 * python3-msgpack, which picks the smallest integer format the way upstream's rmp does): the edge values of
 * each format and a seeded random sweep, in the named-map and both positional encodings. The worker ID is
 * an identity and keeps all 64 bits; the load counters are magnitudes and saturate at {@link Long#MAX_VALUE}
 * (a value that does not fit a long is the largest load, never a negative one).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UnsignedCountersCrossCheckTest {
    private static final String PYTHON = "/usr/bin/python3";
    private static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);

    /** One line per message: form, the four values in decimal (worker_id, decode, prefill, kv_used), hex. */
    private static final String SCRIPT = """
            import msgpack, random
            edges = [0, 1, 2**31, 2**32, 2**53, 2**63 - 1, 2**63, 2**64 - 1]
            rnd = random.Random(20261201)
            values = edges + [rnd.getrandbits(rnd.choice([8, 16, 32, 53, 63, 64])) for _ in range(120)]
            def emit(w, d, p, k):
                m = {'worker_id': w, 'dp_rank': 3, 'active_decode_blocks': d,
                     'active_prefill_tokens': p, 'kv_used_blocks': k}
                print('map', w, d, p, k, msgpack.packb(m, use_bin_type=True).hex())
                print('array5', w, d, p, k, msgpack.packb([w, 3, d, p, k], use_bin_type=True).hex())
                print('array6', w, d, p, k, msgpack.packb([w, 3, d, p, 'local', k], use_bin_type=True).hex())
            for i, v in enumerate(values):
                other = values[(i * 7 + 3) % len(values)]
                emit(v, other, v, other)
                emit(other, v, other, v)
            """;

    @Test
    void u64CountersDecodeUnsignedAndSaturateNeverNegative() throws Exception {
        List<String> lines = python(SCRIPT);
        assertThat(lines).hasSizeGreaterThan(700);
        for (String line : lines) {
            String[] f = line.split(" ");
            byte[] payload = HexFormat.of().parseHex(f[5]);
            Decoded<ActiveLoad> decoded = ActiveLoadDecoder.decode(payload);
            assertThat(decoded).as(line).isInstanceOf(Decoded.Ok.class);
            ActiveLoad load = ((Decoded.Ok<ActiveLoad>) decoded).value();
            assertThat(Long.toUnsignedString(load.workerId())).as(line).isEqualTo(f[1]);
            assertThat(load.dpRank()).as(line).isEqualTo(3);
            assertThat(load.activeDecodeBlocks()).as(line).isEqualTo(saturated(f[2]));
            assertThat(load.activePrefillTokens()).as(line).isEqualTo(saturated(f[3]));
            assertThat(load.kvUsedBlocks()).as(line).isEqualTo(saturated(f[4]));
            assertThat(load.decodeBlocks()).as(line).isNotNegative();
            if (f[0].equals("array6")) {
                assertThat(load.schedulerLoadScope()).isEqualTo("local");
            }
        }
    }

    @Test
    void aDpRankAboveU32IsDroppedWhateverItsEncoding() throws Exception {
        List<String> lines = python("""
                import msgpack
                for r in [2**32, 2**53, 2**63, 2**64 - 1]:
                    print(msgpack.packb({'worker_id': 9, 'dp_rank': r}, use_bin_type=True).hex())
                print(msgpack.packb({'worker_id': 9, 'dp_rank': 2**32 - 1}, use_bin_type=True).hex())
                """);
        for (String line : lines.subList(0, 4)) {
            assertThat(ActiveLoadDecoder.decode(HexFormat.of().parseHex(line))).as(line)
                    .isInstanceOf(Decoded.Dropped.class);
        }
        Decoded<ActiveLoad> top = ActiveLoadDecoder.decode(HexFormat.of().parseHex(lines.get(4)));
        assertThat(((Decoded.Ok<ActiveLoad>) top).value().dpRank()).isEqualTo(0xFFFF_FFFFL);
    }

    private static long saturated(String decimal) {
        return new BigInteger(decimal).min(LONG_MAX).longValueExact();
    }

    private static List<String> python(String script) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(PYTHON, "-c", script).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
        assertThat(p.waitFor()).as(out).isZero();
        return out.lines().toList();
    }
}
