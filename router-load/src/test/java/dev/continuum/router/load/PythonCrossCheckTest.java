package dev.continuum.router.load;

import static dev.continuum.router.load.Fixtures.publisher;
import static dev.continuum.router.load.Fixtures.targets;
import static dev.continuum.router.load.Fixtures.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A second, independent encoder: Debian's python3-msgpack and python3-zmq (libzmq 4.3, which greets with
 * ZMTP 3.1). bin/test installs both; run with /usr/bin/python3.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PythonCrossCheckTest {
    private static final String PYTHON = "/usr/bin/python3";

    private static Process python(String script) throws IOException {
        return new ProcessBuilder(PYTHON, "-c", script).redirectErrorStream(true).start();
    }

    @Test
    void pythonsMsgpackEncodesTheEnvelopeAndActiveLoadToTheHandBuiltFixtureBytes() throws Exception {
        Process p = python("""
                import msgpack
                al = {'worker_id': 1736491, 'dp_rank': 2, 'active_decode_blocks': None,
                      'active_prefill_tokens': None, 'kv_used_blocks': 1200}
                b = msgpack.packb(al, use_bin_type=True)
                env = {'publisher_id': 2046539, 'sequence': 7, 'published_at': 1790000000000,
                       'topic': 'kv_metrics', 'payload': b}
                print(msgpack.packb(env, use_bin_type=True).hex())
                """);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
        assertThat(p.waitFor()).as(out).isZero();

        assertThat(out).isEqualTo(HexFormat.of().formatHex(
                Fixtures.hex(dev.continuum.router.load.wire.WireFixturesTestAccess.envelopeHex())));
    }

    @Test
    void aLibzmqPublisherSpeakingZmtp31FeedsTheStore() throws Exception {
        Process p = python("""
                import sys, time, struct, zmq, msgpack
                ctx = zmq.Context()
                pub = ctx.socket(zmq.PUB)
                port = pub.bind_to_random_port('tcp://127.0.0.1')
                print(port, flush=True)
                seq = 0
                deadline = time.time() + 30
                while time.time() < deadline:
                    al = msgpack.packb({'worker_id': 77, 'dp_rank': 1, 'active_decode_blocks': 5,
                                        'active_prefill_tokens': None, 'kv_used_blocks': 900 + seq}, use_bin_type=True)
                    env = msgpack.packb({'publisher_id': 2**63 + 5, 'sequence': seq, 'published_at': int(time.time() * 1000),
                                         'topic': 'kv_metrics', 'payload': al}, use_bin_type=True)
                    pub.send_multipart([b'kv_metrics', struct.pack('>Q', 2**63 + 5), struct.pack('>Q', seq),
                                        struct.pack('>BI', 1, len(env)) + env])
                    seq += 1
                    time.sleep(0.02)
                """);
        LoadSupervisor supervisor = LoadSupervisor.builder(new SimpleMeterRegistry()).build();
        supervisor.start().join();
        try {
            BufferedReader reader = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            int port = Integer.parseInt(reader.readLine().trim());
            long publisherId = Long.MIN_VALUE + 5; // 2^63 + 5 as an unsigned long
            supervisor.update(targets(1, List.of(publisher(publisherId, "tcp://127.0.0.1:" + port)), worker(77)));

            await().atMost(Duration.ofSeconds(20)).until(() -> supervisor.store().latest(worker(77), 1) != null);
            LoadSample s = supervisor.store().latest(worker(77), 1);
            assertThat(s.publisherId()).isEqualTo(publisherId);
            assertThat(s.load().activeDecodeBlocks()).isEqualTo(5L);
            assertThat(s.load().kvUsedBlocks()).isGreaterThanOrEqualTo(900L);
        } finally {
            supervisor.stop().join();
            p.destroy();
            p.waitFor(5, TimeUnit.SECONDS);
        }
    }
}
