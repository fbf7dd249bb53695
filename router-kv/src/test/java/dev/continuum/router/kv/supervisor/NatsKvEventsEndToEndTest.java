package dev.continuum.router.kv.supervisor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.MutableDynamoRegistry;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.WorkerRole;
import dev.continuum.router.eventplane.ChannelDialer;
import dev.continuum.router.eventplane.SubscriptionState;
import dev.continuum.router.eventplane.Transport;
import dev.continuum.router.eventplane.nats.NatsConfig;
import dev.continuum.router.eventplane.nats.NatsConnection;
import dev.continuum.router.eventplane.nats.NatsJetStreamConfig;
import dev.continuum.router.kv.index.IndexLimits;
import dev.continuum.router.kv.index.KvIndexMetrics;
import dev.continuum.router.kv.index.KvIndexWriter;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.OverlapScores;
import dev.continuum.router.testing.NatsServerExtension;
import dev.continuum.router.testing.NpmFixtures;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The event-plane goal for kv-events (docs/nats.md): one replay of RouterEvents, encoded by python3-msgpack,
 * is published over ZMQ (python3-zmq, one XPUB per worker) and over NATS (node's client, both workers on the
 * component-scoped subject upstream uses); each feeds its own KV supervisor and radix index, and both indexes
 * end identical: the same nodes, ownerships and ranks, and the same matched blocks for every chain of the
 * replay on every rank. The replay stores, extends, removes, clears and skips an event_id, so the cursor and
 * gap rules run on both transports. Real peers throughout: nats-server, libzmq, node.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NatsKvEventsEndToEndTest {
    @RegisterExtension
    static final NatsServerExtension NATS = NatsServerExtension.plain();

    private static final String NS = "dynamo";
    private static final String MODEL = "Qwen/Qwen3-0.6B";
    private static final String SUBJECT_PREFIX = "namespace.dynamo.component.backend";
    private static final Instant T0 = Instant.parse("2026-12-07T04:00:00Z");
    /** Worker 5 publishes as publisher 2^63 + 5 and worker 6 as publisher 6. */
    private static final long[] WORKERS = {5, 6};

    private static long publisherOf(long worker) {
        return worker == 5 ? Long.MIN_VALUE + 5 : 6;
    }

    private static final String REPLAY = """
            import msgpack, random, sys
            rnd = random.Random(3030)
            clean = len(sys.argv) > 3  # no deliberate clear or gap
            out, queries = [], []
            pubs = {5: 2**63 + 5, 6: 6}
            seq = {5: 0, 6: 0}
            event_id = {5: 0, 6: 0}
            chains = {5: [], 6: []}   # per worker: [ (block_hashes, tokens_hashes) ]
            def emit(worker, data, dp=0):
                ev = {'event_id': event_id[worker], 'data': data, 'dp_rank': dp}
                event_id[worker] += 1
                r = {'worker_id': worker, 'storage_tier': 'device', 'event': ev}
                env = {'publisher_id': pubs[worker], 'sequence': seq[worker], 'published_at': 1790000000000,
                       'topic': 'kv-events', 'payload': msgpack.packb(r, use_bin_type=True)}
                out.append('%d %s' % (pubs[worker], msgpack.packb(env, use_bin_type=True).hex()))
                seq[worker] += 1
            for i in range(600):
                w = rnd.choice([5, 6])
                roll = rnd.random()
                if i == 300 and not clean:
                    emit(w, 'cleared'); chains[w] = []; continue
                if i == 420 and w == 6 and not clean:
                    event_id[6] += 3  # an event_id gap on worker 6's rank
                if roll < 0.7 or not chains[w]:
                    if chains[w] and rnd.random() < 0.6:
                        base = rnd.choice(chains[w]); parent = base[0][-1]
                        blocks, tokens = list(base[0]), list(base[1])
                    else:
                        base = None; parent = None; blocks, tokens = [], []
                    n = rnd.randrange(1, 5)
                    new_b = [rnd.getrandbits(64) for _ in range(n)]
                    new_t = [rnd.getrandbits(64) for _ in range(n)] if rnd.random() < 0.8 or not tokens else tokens[:n]
                    if len(new_t) < n: new_t += [rnd.getrandbits(64) for _ in range(n - len(new_t))]
                    emit(w, {'stored': {'parent_hash': parent, 'start_position': None,
                                        'blocks': [{'block_hash': b, 'tokens_hash': t, 'mm_extra_info': None}
                                                   for b, t in zip(new_b, new_t)]}})
                    chains[w].append((blocks + new_b, tokens + new_t))
                else:
                    c = rnd.choice(chains[w])
                    emit(w, {'removed': {'block_hashes': [c[0][-1]]}})
                    chains[w].remove(c)
                    if len(c[0]) > 1: chains[w].append((c[0][:-1], c[1][:-1]))
            for w in (5, 6):
                for c in chains[w]:
                    queries.append(','.join(str(t) for t in c[1]))
            open(sys.argv[1], 'w').write('\\n'.join(out) + '\\n')
            open(sys.argv[2], 'w').write('\\n'.join(queries) + '\\n')
            """;

    private static DynamoWorker aggregated(long id) {
        ModelCard card = new ModelCard(MODEL, null, false, 16, new ModelCard.WorkerCapacity(1000L, 1000L, 256L,
                32768L), null, null, null, ModelCard.CardArtifacts.NONE, null, "{}");
        return new DynamoWorker(new WorkerId(NS, id), WorkerRole.AGGREGATED, "backend", "generate", card, T0, T0);
    }

    private static DynamoPublisher channel(long worker, String address) {
        return new DynamoPublisher(new PublisherId(NS, publisherOf(worker)), PublisherTopic.KV_EVENTS, "backend",
                null, address);
    }

    /** One index fed by one supervisor following its own registry. */
    private record Side(SimpleMeterRegistry meters, KvIndexWriter writer, KvSupervisor kv,
                        MutableDynamoRegistry registry) {
        static Side create(ChannelDialer dialer) {
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            KvIndexWriter writer = new KvIndexWriter(meters, IndexLimits.DEFAULT);
            KvSupervisor kv = KvSupervisor.builder(writer, meters).dialer(dialer).build();
            return new Side(meters, writer, kv, MutableDynamoRegistry.create());
        }

        AutoCloseable start(List<DynamoPublisher> channels) {
            writer.start().join();
            kv.start().join();
            AutoCloseable following = kv.follow(registry);
            registry.reconfigure(true, DiscoverySourceKind.ETCD, List.of(NS),
                    FleetView.of(List.of(aggregated(5), aggregated(6)), channels));
            return following;
        }

        double events() {
            return meters.find(KvIndexMetrics.EVENTS).counters().stream().mapToDouble(Counter::count).sum();
        }

        String state(List<long[]> queries) {
            StringBuilder s = new StringBuilder("nodes=" + writer.index().nodes() + " ownerships="
                    + writer.index().ownerships() + " ranks=" + writer.index().ranks());
            for (long[] q : queries) {
                OverlapScores out = new OverlapScores(64);
                writer.index().findMatches(new BlockHashes(16, q), out);
                s.append(' ').append(out.matchedBlocksOf(5, 0)).append('/').append(out.matchedBlocksOf(6, 0));
            }
            return s.toString();
        }

        void stop() {
            kv.stop().join();
            writer.stop().join();
        }
    }

    @Test
    void theSameKvEventsReplayOverNatsAndOverZmqYieldsIdenticalIndexes(@TempDir Path dir) throws Exception {
        Path replay = dir.resolve("replay.txt");
        Path queryFile = dir.resolve("queries.txt");
        Process gen = new ProcessBuilder("/usr/bin/python3", "-c", REPLAY, replay.toString(), queryFile.toString())
                .redirectErrorStream(true).start();
        String genLog = new String(gen.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(gen.waitFor()).as(genLog).isZero();
        List<String> lines = Files.readAllLines(replay).stream().filter(l -> !l.isBlank()).toList();
        List<long[]> queries = Files.readAllLines(queryFile).stream().filter(l -> !l.isBlank())
                .map(l -> Arrays.stream(l.split(",")).mapToLong(Long::parseUnsignedLong).toArray()).toList();
        assertThat(queries).isNotEmpty();

        NatsConnection nats = NatsConnection.standalone();
        nats.apply(new NatsConfig(List.of(NATS.url()), null, null, NatsConfig.DEFAULT_CONNECT_TIMEOUT,
                NatsConfig.DEFAULT_RECONNECT_WAIT));
        nats.start().join();
        Side overNats = Side.create(ChannelDialer.DEFAULT.withNats(nats));
        Side overZmq = Side.create(ChannelDialer.DEFAULT);
        List<Process> peers = new ArrayList<>();
        List<AutoCloseable> following = new ArrayList<>();
        try {
            following.add(overZmq.start(zmqChannels(replay, peers)));

            String address = DynamoPublisher.NATS_ADDRESS_PREFIX + SUBJECT_PREFIX;
            following.add(overNats.start(List.of(channel(5, address), channel(6, address))));
            await().atMost(Duration.ofSeconds(20)).until(() -> overNats.kv().subscriptions().stream()
                    .filter(v -> v.transport() == Transport.NATS && v.state() == SubscriptionState.CONNECTED)
                    .count() == 2);
            NpmFixtures.nodeModules("nats");
            Process node = new ProcessBuilder("node", NpmFixtures.setDirectory("nats").resolve("publish.mjs").toString(),
                    NATS.url()).redirectErrorStream(true).start();
            peers.add(node);
            try (OutputStream in = node.getOutputStream()) {
                for (String line : lines) {
                    in.write((SUBJECT_PREFIX + ".kv-events " + line.split(" ")[1] + "\n")
                            .getBytes(StandardCharsets.US_ASCII));
                }
            }
            String nodeLog = new String(node.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(node.waitFor()).as(nodeLog).isZero();

            await().atMost(Duration.ofSeconds(30)).until(() -> overZmq.events() >= lines.size()
                    && overNats.events() >= lines.size());
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(overNats.state(queries)).isEqualTo(overZmq.state(queries)));
            String state = overZmq.state(queries);
            assertThat(overZmq.writer().index().ownerships()).as(state).isPositive();
            assertThat(overNats.events()).isEqualTo(overZmq.events());
        } finally {
            for (AutoCloseable f : following) {
                f.close();
            }
            overNats.stop();
            overZmq.stop();
            nats.stop().join();
            for (Process p : peers) {
                p.destroy();
                p.waitFor(5, TimeUnit.SECONDS);
            }
        }
    }

    /** One python3-zmq XPUB per worker, each sending its part of {@code replay} once the router subscribed. */
    private static List<DynamoPublisher> zmqChannels(Path replay, List<Process> peers) throws Exception {
        List<DynamoPublisher> zmqChannels = new ArrayList<>();
        for (long worker : WORKERS) {
            Process pub = new ProcessBuilder("/usr/bin/python3", "-c", """
                import sys, struct, zmq
                mine, path = int(sys.argv[1]), sys.argv[2]
                ctx = zmq.Context()
                pub = ctx.socket(zmq.XPUB)
                port = pub.bind_to_random_port('tcp://127.0.0.1')
                print(port, flush=True)
                pub.recv()  # the router's subscription
                seq = 0
                for line in open(path):
                    if not line.strip():
                        continue
                    p, hexed = line.split()
                    if int(p) != mine:
                        continue
                    env = bytes.fromhex(hexed)
                    pub.send_multipart([b'kv-events', struct.pack('>Q', mine), struct.pack('>Q', seq),
                                struct.pack('>BI', 1, len(env)) + env])
                    seq += 1
                sys.stdin.read()
                """, Long.toUnsignedString(publisherOf(worker)), replay.toString())
                .redirectErrorStream(true).start();
            peers.add(pub);
            BufferedReader out = new BufferedReader(new InputStreamReader(pub.getInputStream(), StandardCharsets.UTF_8));
            zmqChannels.add(channel(worker, "tcp://127.0.0.1:" + Integer.parseInt(out.readLine().trim())));
        }
        return zmqChannels;
    }

    /** Writes "SUBJECT HEX" lines for {@code lines} to node's stdin and waits for it to exit 0. */
    private static void node(List<String> command, List<String> lines) throws Exception {
        NpmFixtures.nodeModules("nats");
        Process node = new ProcessBuilder(command).redirectErrorStream(true).start();
        try (OutputStream in = node.getOutputStream()) {
            for (String line : lines) {
                in.write((SUBJECT_PREFIX + ".kv-events " + line.split(" ")[1] + "\n").getBytes(StandardCharsets.US_ASCII));
            }
        }
        String log = new String(node.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(node.waitFor()).as(log).isZero();
        assertThat(log).contains("published " + lines.size());
    }

    private static double gaps(Side side) {
        return side.meters().find(KvIndexMetrics.EVENTS).tag("result", "gap").counters().stream()
                .mapToDouble(Counter::count).sum();
    }

    private static NatsConnection connection(NatsJetStreamConfig jetstream) {
        NatsConnection nats = NatsConnection.standalone();
        nats.apply(new NatsConfig(List.of(NATS.url()), null, null, NatsConfig.DEFAULT_CONNECT_TIMEOUT,
                NatsConfig.DEFAULT_RECONNECT_WAIT, jetstream));
        nats.start().join();
        return nats;
    }

    /**
     * The JetStream goal: the fleet's kv-events are in a stream; the router reads half of them, stops, the fleet
     * publishes the rest meanwhile, and the restarted router (same consumer prefix) ends with the index of a
     * router that saw every event over ZMQ, with no rank cleared on either run.
     */
    @Test
    void afterARouterRestartAgainstJetStreamNoEventIsLostAndNoRankIsCleared(@TempDir Path dir) throws Exception {
        Path replay = dir.resolve("replay.txt");
        Path queryFile = dir.resolve("queries.txt");
        Process gen = new ProcessBuilder("/usr/bin/python3", "-c", REPLAY, replay.toString(), queryFile.toString(),
                "clean").redirectErrorStream(true).start();
        String genLog = new String(gen.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(gen.waitFor()).as(genLog).isZero();
        List<String> lines = Files.readAllLines(replay).stream().filter(l -> !l.isBlank()).toList();
        List<long[]> queries = Files.readAllLines(queryFile).stream().filter(l -> !l.isBlank())
                .map(l -> Arrays.stream(l.split(",")).mapToLong(Long::parseUnsignedLong).toArray()).toList();
        int half = lines.size() / 2;
        List<String> jetstream = List.of("node", NpmFixtures.setDirectory("nats").resolve("jetstream.mjs").toString(),
                NATS.url(), "KV_EVENTS", SUBJECT_PREFIX + ".kv-events");
        NatsJetStreamConfig settings = new NatsJetStreamConfig("KV_EVENTS", "router-a");
        String address = DynamoPublisher.NATS_ADDRESS_PREFIX + SUBJECT_PREFIX;
        List<DynamoPublisher> natsChannels = List.of(channel(5, address), channel(6, address));
        List<Process> peers = new ArrayList<>();
        Side overZmq = Side.create(ChannelDialer.DEFAULT);
        AutoCloseable zmqFollowing = null;
        try {
            node(jetstream, lines.subList(0, half));

            // The first run reads the first half from the stream, then stops.
            NatsConnection first = connection(settings);
            Side before = Side.create(ChannelDialer.DEFAULT.withNats(first));
            AutoCloseable following = before.start(natsChannels);
            // 60 s, and the count in the failure: this wait timed out twice on 2026-12-07 (in 4 runs), cause not
            // found yet; a slow first delivery should not fail the suite, a stuck one should say how far it got.
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(before.events())
                    .as("events read from the stream by the first run, of %d", half).isGreaterThanOrEqualTo(half));
            following.close();
            before.stop();
            first.stop().join();
            assertThat(gaps(before)).isZero();

            // The fleet goes on while the router is down.
            node(jetstream, lines.subList(half, lines.size()));

            // The restarted router, and a reference that saw every event over ZMQ.
            NatsConnection second = connection(settings);
            Side after = Side.create(ChannelDialer.DEFAULT.withNats(second));
            AutoCloseable followingAfter = after.start(natsChannels);
            zmqFollowing = overZmq.start(zmqChannels(replay, peers));
            try {
                await().atMost(Duration.ofSeconds(30)).until(() -> after.events() >= lines.size()
                        && overZmq.events() >= lines.size());
                await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                        assertThat(after.state(queries)).isEqualTo(overZmq.state(queries)));
                assertThat(after.events()).isEqualTo(lines.size());
                assertThat(gaps(after)).isZero();
                assertThat(gaps(overZmq)).isZero();
                assertThat(after.writer().index().ownerships()).isPositive();
            } finally {
                followingAfter.close();
                after.stop();
                second.stop().join();
            }
        } finally {
            if (zmqFollowing != null) {
                zmqFollowing.close();
            }
            overZmq.stop();
            for (Process p : peers) {
                p.destroy();
                p.waitFor(5, TimeUnit.SECONDS);
            }
        }
    }
}
