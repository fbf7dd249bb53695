package dev.continuum.router.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.etcd.EtcdReader;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The read-only contract, enforced on the compiled module: every etcd and gRPC method the discovery code
 * references is on a short allow list of reads, watches and client setup. A put, delete, transaction,
 * compaction, lease, lock or election call, or any raw gRPC stub, fails this test.
 */
@Timeout(30)
class ReadOnlyContractTest {
    /** owner (internal name) + "." + method name. Client construction, range get, watch, and their data types. */
    private static final Set<String> ALLOWED_PREFIXES = Set.of(
            "io/etcd/jetcd/Client.builder",
            "io/etcd/jetcd/Client.getKVClient",
            "io/etcd/jetcd/Client.getWatchClient",
            "io/etcd/jetcd/Client.close",
            "io/etcd/jetcd/ClientBuilder.",
            "io/etcd/jetcd/KV.get",
            "io/etcd/jetcd/Watch.watch",
            "io/etcd/jetcd/Watch$Watcher.close",
            "io/etcd/jetcd/Watch$Listener.",
            "io/etcd/jetcd/ByteSequence.from",
            "io/etcd/jetcd/ByteSequence.getBytes",
            "io/etcd/jetcd/ByteSequence.toString",
            "io/etcd/jetcd/KeyValue.getKey",
            "io/etcd/jetcd/KeyValue.getValue",
            "io/etcd/jetcd/kv/GetResponse.getKvs",
            "io/etcd/jetcd/kv/GetResponse.getHeader",
            "io/etcd/jetcd/kv/GetResponse.isMore",
            "io/etcd/jetcd/Response$Header.getRevision",
            "io/etcd/jetcd/watch/WatchResponse.getEvents",
            "io/etcd/jetcd/watch/WatchResponse.isCreatedNotify",
            "io/etcd/jetcd/watch/WatchEvent.getKeyValue",
            "io/etcd/jetcd/watch/WatchEvent.getEventType",
            "io/etcd/jetcd/watch/WatchEvent$EventType.",
            "io/etcd/jetcd/options/GetOption.builder",
            "io/etcd/jetcd/options/GetOption$Builder.",
            "io/etcd/jetcd/options/WatchOption.builder",
            "io/etcd/jetcd/options/WatchOption$Builder.",
            "io/etcd/jetcd/common/exception/CompactedException.getCompactedRevision",
            "io/etcd/jetcd/common/exception/EtcdException.getErrorCode",
            "io/etcd/jetcd/common/exception/ErrorCode.",
            "io/grpc/Status.",
            "io/grpc/Status$Code.",
            "io/grpc/netty/GrpcSslContexts.forClient");
    private static final List<String> WATCHED_PACKAGES = List.of("io/etcd/jetcd/", "io/grpc/");
    private static final Set<String> FORBIDDEN_NAMES = Set.of("put", "delete", "txn", "compact", "grant", "revoke",
            "keepAlive", "keepAliveOnce", "lock", "unlock", "campaign", "resign", "proclaim", "getLeaseClient",
            "getLockClient", "getElectionClient", "getAuthClient", "getMaintenanceClient", "getClusterClient");

    @Test
    void discoveryReferencesNoEtcdCallButRangeGetsAndWatches() throws Exception {
        Path classes = Path.of(EtcdReader.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<String> references = new ArrayList<>();
        try (Stream<Path> files = Files.walk(classes)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                try (InputStream in = Files.newInputStream(file)) {
                    references.addAll(methodReferences(in));
                }
            }
        }
        assertThat(references).as("the scan must see the jetcd calls it guards")
                .contains("io/etcd/jetcd/KV.get", "io/etcd/jetcd/Watch.watch");
        assertThat(violations(references)).isEmpty();
    }

    /** fabric8 verbs that change the cluster; the Kubernetes sources may only list, watch and build clients. */
    private static final Set<String> KUBERNETES_WRITES = Set.of("create", "createOr", "createOrReplace", "update",
            "updateStatus", "patch", "patchStatus", "edit", "editStatus", "replace", "replaceStatus", "delete",
            "serverSideApply", "scale", "evict", "withGracePeriod");

    @Test
    void theKubernetesSourcesReferenceNoFabric8WriteVerb() throws Exception {
        Path classes = Path.of(EtcdReader.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<String> references = new ArrayList<>();
        try (Stream<Path> files = Files.walk(classes)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                try (InputStream in = Files.newInputStream(file)) {
                    references.addAll(methodReferences(in));
                }
            }
        }
        List<String> fabric8 = references.stream().filter(r -> r.startsWith("io/fabric8/")).toList();
        assertThat(fabric8).as("the scan must see the fabric8 calls it guards").anyMatch(r -> r.endsWith(".watch"))
                .anyMatch(r -> r.endsWith(".list"));
        assertThat(fabric8).noneMatch(r -> KUBERNETES_WRITES.contains(r.substring(r.lastIndexOf('.') + 1)));
    }

    @Test
    void theScanCatchesAWriteALeaseAndARawStub() throws IOException, URISyntaxException {
        List<String> references;
        try (InputStream in = ReadOnlyContractTest.class.getResourceAsStream("ReadOnlyContractTest$Offender.class")) {
            references = methodReferences(in);
        }
        assertThat(violations(references)).contains("io/etcd/jetcd/KV.put", "io/etcd/jetcd/KV.delete",
                "io/etcd/jetcd/Client.getLeaseClient", "io/etcd/jetcd/Lease.grant");
    }

    /** Code the scanner must reject; compiled into the test classes only, never run. */
    @SuppressWarnings("unused")
    static final class Offender {
        static void write(io.etcd.jetcd.Client client) {
            client.getKVClient().put(io.etcd.jetcd.ByteSequence.EMPTY, io.etcd.jetcd.ByteSequence.EMPTY);
            client.getKVClient().delete(io.etcd.jetcd.ByteSequence.EMPTY);
            client.getLeaseClient().grant(10);
        }
    }

    private static Set<String> violations(List<String> references) {
        Set<String> violations = new TreeSet<>();
        for (String reference : references) {
            String name = reference.substring(reference.lastIndexOf('.') + 1);
            boolean watched = WATCHED_PACKAGES.stream().anyMatch(reference::startsWith);
            boolean allowed = ALLOWED_PREFIXES.stream().anyMatch(reference::startsWith);
            if ((watched && !allowed) || (watched && FORBIDDEN_NAMES.contains(name))) {
                violations.add(reference);
            }
        }
        return violations;
    }

    /** Every Methodref and InterfaceMethodref of a class file's constant pool, as {@code owner.name}. */
    private static List<String> methodReferences(InputStream classFile) throws IOException {
        DataInputStream in = new DataInputStream(classFile);
        if (in.readInt() != 0xCAFEBABE) {
            throw new IOException("not a class file");
        }
        in.readUnsignedShort();
        in.readUnsignedShort();
        int count = in.readUnsignedShort();
        String[] utf8 = new String[count];
        int[] classNameIndex = new int[count];
        int[][] memberRefs = new int[count][];
        int[][] nameAndTypes = new int[count][];
        for (int i = 1; i < count; i++) {
            int tag = in.readUnsignedByte();
            switch (tag) {
                case 1 -> utf8[i] = in.readUTF();
                case 3, 4 -> in.readInt();
                case 5, 6 -> {
                    in.readLong();
                    i++;
                }
                case 7 -> classNameIndex[i] = in.readUnsignedShort();
                case 8, 16, 19, 20 -> in.readUnsignedShort();
                case 9 -> {
                    in.readUnsignedShort();
                    in.readUnsignedShort();
                }
                case 10, 11 -> memberRefs[i] = new int[] {in.readUnsignedShort(), in.readUnsignedShort()};
                case 12 -> nameAndTypes[i] = new int[] {in.readUnsignedShort(), in.readUnsignedShort()};
                case 15 -> {
                    in.readUnsignedByte();
                    in.readUnsignedShort();
                }
                case 17, 18 -> {
                    in.readUnsignedShort();
                    in.readUnsignedShort();
                }
                default -> throw new IOException("unknown constant pool tag " + tag);
            }
        }
        List<String> references = new ArrayList<>();
        for (int[] ref : memberRefs) {
            if (ref != null) {
                String owner = utf8[classNameIndex[ref[0]]];
                String name = utf8[nameAndTypes[ref[1]][0]];
                references.add(owner + "." + name);
            }
        }
        return references;
    }
}
