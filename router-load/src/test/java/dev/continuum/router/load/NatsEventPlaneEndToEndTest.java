package dev.continuum.router.load;

import static dev.continuum.router.load.Fixtures.NS;
import static dev.continuum.router.load.Fixtures.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.eventplane.SubscriptionState;
import dev.continuum.router.eventplane.Transport;
import dev.continuum.router.eventplane.nats.NatsConfig;
import dev.continuum.router.eventplane.nats.NatsConnection;
import dev.continuum.router.testing.NatsServerExtension;
import dev.continuum.router.testing.NpmFixtures;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The event-plane goal for kv_metrics (docs/nats.md): one replay, encoded by python3-msgpack (not by the
 * router), is published over ZMQ by python3-zmq and over NATS by node's NATS client, each into its own load
 * supervisor; both stores end identical. The replay has two publishers on one namespace-scoped subject (as
 * upstream's kv_metrics channels are), a duplicate and a sequence gap, so the identity gate, dedup and gap rule
 * run on both transports. Real peers throughout: nats-server, libzmq, node.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NatsEventPlaneEndToEndTest {
    @RegisterExtension
    static final NatsServerExtension NATS = NatsServerExtension.plain();

    private static final long P1 = Long.MIN_VALUE + 11; // 2^63 + 11, unsigned
    private static final long P2 = 42;
    private static final String SUBJECT_PREFIX = "namespace.dynamo";
    private static final List<WorkerId> WORKERS = List.of(worker(101), worker(102), worker(103), worker(104));

    /** Writes the replay as "PUBLISHER SEQUENCE HEX" lines (PUBLISHER unsigned decimal), from python3-msgpack. */
    private static Path replay(Path dir) throws Exception {
        Path out = dir.resolve("replay.txt");
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", """
                import msgpack, random, sys
                rnd = random.Random(30)
                pubs = {2**63 + 11: 0, 42: 0}
                lines = []
                for i in range(400):
                    pub = rnd.choice(list(pubs))
                    seq = pubs[pub]
                    if i == 150 and pub == 42:
                        seq += 1  # a gap: the publisher's samples are dropped, then rebuilt
                    pubs[pub] = seq + 1
                    worker = (101 if pub == 42 else 103) + rnd.randrange(2)  # disjoint: order per key is the publisher's
                    load = {'worker_id': worker, 'dp_rank': rnd.randrange(3), 'active_decode_blocks': rnd.randrange(500),
                            'active_prefill_tokens': None, 'kv_used_blocks': rnd.randrange(1 << 40)}
                    env = {'publisher_id': pub, 'sequence': seq, 'published_at': 1790000000000 + i,
                           'topic': 'kv_metrics', 'payload': msgpack.packb(load, use_bin_type=True)}
                    hexed = msgpack.packb(env, use_bin_type=True).hex()
                    lines.append('%d %d %s' % (pub, seq, hexed))
                    if i == 200:
                        lines.append('%d %d %s' % (pub, seq, hexed))  # a duplicate
                open(sys.argv[1], 'w').write('\\n'.join(lines) + '\\n')
                """, out.toString()).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(log).isZero();
        return out;
    }

    private static DynamoPublisher publisher(long id, String address) {
        return new DynamoPublisher(new PublisherId(NS, id), PublisherTopic.KV_METRICS, null, null, address);
    }

    private static LoadTargets targets(List<DynamoPublisher> publishers) {
        return Fixtures.targets(1, publishers, WORKERS.toArray(WorkerId[]::new));
    }

    /** The store's state: every (worker, rank)'s held sample as publisher, sequence and load. */
    private static Map<String, String> state(LoadStore store) {
        Map<String, String> state = new LinkedHashMap<>();
        for (WorkerId w : WORKERS) {
            for (int rank = 0; rank < 3; rank++) {
                LoadSample s = store.latest(w, rank);
                state.put(w.instanceId() + "/" + rank, s == null ? "-" : Long.toUnsignedString(s.publisherId())
                        + "#" + s.sequence() + " " + s.load());
            }
        }
        return state;
    }

    @Test
    void theSameReplayOverNatsAndOverZmqYieldsIdenticalLoadStores(@TempDir Path dir) throws Exception {
        Path replay = replay(dir);
        List<String> lines = Files.readAllLines(replay);
        Map<Long, Long> lastSequence = new LinkedHashMap<>();
        for (String line : lines) {
            String[] f = line.split(" ");
            lastSequence.put(Long.parseUnsignedLong(f[0]), Long.parseLong(f[1]));
        }

        NatsConnection nats = NatsConnection.standalone();
        nats.apply(new NatsConfig(List.of(NATS.url()), null, null, NatsConfig.DEFAULT_CONNECT_TIMEOUT,
                NatsConfig.DEFAULT_RECONNECT_WAIT));
        nats.start().join();
        LoadSupervisor overNats = LoadSupervisor.builder(new SimpleMeterRegistry()).nats(nats).build();
        LoadSupervisor overZmq = LoadSupervisor.builder(new SimpleMeterRegistry()).build();
        overNats.start().join();
        overZmq.start().join();
        List<Process> peers = new ArrayList<>();
        try {
            // ZMQ: one python3-zmq XPUB per publisher; each sends its part of the replay once subscribed.
            List<DynamoPublisher> zmqPublishers = new ArrayList<>();
            for (long id : List.of(P1, P2)) {
                Process pub = new ProcessBuilder("/usr/bin/python3", "-c", """
                        import sys, struct, zmq
                        mine, path = int(sys.argv[1]), sys.argv[2]
                        ctx = zmq.Context()
                        pub = ctx.socket(zmq.XPUB)
                        port = pub.bind_to_random_port('tcp://127.0.0.1')
                        print(port, flush=True)
                        pub.recv()  # the router's subscription
                        for line in open(path):
                            p, seq, hexed = line.split()
                            if int(p) != mine:
                                continue
                            env = bytes.fromhex(hexed)
                            pub.send_multipart([b'kv_metrics', struct.pack('>Q', mine), struct.pack('>Q', int(seq)),
                                                struct.pack('>BI', 1, len(env)) + env])
                        print('sent', flush=True)
                        sys.stdin.read()  # keep the socket until the test ends
                        """, Long.toUnsignedString(id), replay.toString()).redirectErrorStream(true).start();
                peers.add(pub);
                BufferedReader out = new BufferedReader(new InputStreamReader(pub.getInputStream(), StandardCharsets.UTF_8));
                zmqPublishers.add(publisher(id, "tcp://127.0.0.1:" + Integer.parseInt(out.readLine().trim())));
            }
            overZmq.update(targets(zmqPublishers));

            // NATS: both publishers' records name the same namespace-scoped subject prefix.
            String address = DynamoPublisher.NATS_ADDRESS_PREFIX + SUBJECT_PREFIX;
            overNats.update(targets(List.of(publisher(P1, address), publisher(P2, address))));
            await().atMost(Duration.ofSeconds(20)).until(() -> overNats.subscriptions().stream()
                    .filter(v -> v.transport() == Transport.NATS && v.state() == SubscriptionState.CONNECTED)
                    .count() == 2);
            // The admin view lists them with their transport.
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> rows = (List<Map<String, Object>>) LoadAdminView.render(2,
                    overNats.subscriptions()).get("subscriptions");
            assertThat(rows).extracting(r -> r.get("transport"), r -> r.get("state"), r -> r.get("publisher_id"))
                    .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("nats", "connected", "42"),
                            org.assertj.core.groups.Tuple.tuple("nats", "connected", Long.toUnsignedString(P1)));
            NpmFixtures.nodeModules("nats");
            Process node = new ProcessBuilder("node", NpmFixtures.setDirectory("nats").resolve("publish.mjs").toString(),
                    NATS.url()).redirectErrorStream(true).start();
            peers.add(node);
            try (OutputStream in = node.getOutputStream()) {
                for (String line : lines) {
                    String[] f = line.split(" ");
                    in.write((SUBJECT_PREFIX + ".kv_metrics " + f[2] + "\n").getBytes(StandardCharsets.US_ASCII));
                }
            }
            String nodeLog = new String(node.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(node.waitFor()).as(nodeLog).isZero();
            assertThat(nodeLog).contains("published " + lines.size());

            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                for (var e : lastSequence.entrySet()) {
                    assertThat(highest(overZmq.store(), e.getKey())).isEqualTo(e.getValue());
                    assertThat(highest(overNats.store(), e.getKey())).isEqualTo(e.getValue());
                }
            });
            Map<String, String> zmq = state(overZmq.store());
            assertThat(zmq.values()).anyMatch(v -> !v.equals("-"));
            assertThat(state(overNats.store())).isEqualTo(zmq);
        } finally {
            overNats.stop().join();
            overZmq.stop().join();
            nats.stop().join();
            for (Process p : peers) {
                p.destroy();
                p.waitFor(5, TimeUnit.SECONDS);
            }
        }
    }

    private static long highest(LoadStore store, long publisherId) {
        long max = -1;
        for (WorkerId w : WORKERS) {
            for (int rank = 0; rank < 3; rank++) {
                LoadSample s = store.latest(w, rank);
                if (s != null && s.publisherId() == publisherId) {
                    max = Math.max(max, s.sequence());
                }
            }
        }
        return max;
    }
}
