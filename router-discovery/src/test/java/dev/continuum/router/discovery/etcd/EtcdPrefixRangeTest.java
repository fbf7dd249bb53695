package dev.continuum.router.discovery.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Paging a prefix at one revision, against an in-memory stand-in for etcd's range RPC. */
@Timeout(30)
class EtcdPrefixRangeTest {
    /** Keys in byte order; a response "does not fit" when its values add up to more than maxResponseBytes. */
    private static class FakeEtcd implements EtcdReader {
        final TreeMap<String, byte[]> store = new TreeMap<>();
        final List<String> calls = new ArrayList<>();
        int maxResponseBytes = Integer.MAX_VALUE;
        long revision = 41;

        @Override
        public RangePage range(String prefix, byte[] fromKey, long atRevision, int limit, boolean keysOnly,
                               Duration timeout) throws EtcdReadException {
            calls.add(new String(fromKey, StandardCharsets.UTF_8).replace("\0", "\\0") + "@" + atRevision + "x" + limit
                    + (keysOnly ? " keys" : ""));
            List<Entry> entries = new ArrayList<>();
            int bytes = 0;
            var tail = store.tailMap(new String(fromKey, StandardCharsets.UTF_8), true);
            for (var entry : tail.entrySet()) {
                if (!entry.getKey().startsWith(prefix) || entries.size() == limit) {
                    break;
                }
                bytes += keysOnly ? 0 : entry.getValue().length;
                entries.add(new Entry(entry.getKey().getBytes(StandardCharsets.UTF_8),
                        keysOnly ? new byte[0] : entry.getValue()));
            }
            if (bytes > maxResponseBytes) {
                throw new EtcdReadException(EtcdReadException.Kind.TOO_LARGE, "too large", new RuntimeException());
            }
            boolean more = tail.keySet().stream().filter(k -> k.startsWith(prefix)).count() > entries.size();
            // A later write moves the store's revision; pages pinned to a revision must not notice.
            revision++;
            return new RangePage(entries, atRevision == 0 ? revision : atRevision, more);
        }

        @Override
        public WatchHandle watch(String prefix, long fromRevision, WatchListener listener) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close() {
        }
    }

    private static long deadline() {
        return System.nanoTime() + Duration.ofSeconds(10).toNanos();
    }

    @Test
    void pagesAreReadAtTheRevisionOfTheFirstPage() throws Exception {
        FakeEtcd etcd = new FakeEtcd();
        for (int i = 0; i < 10; i++) {
            etcd.store.put("v1/instances/dynamo/k" + i, new byte[] {(byte) i});
        }
        etcd.store.put("v1/instances/other/x", new byte[1]);
        EtcdPrefixRange.Result result = EtcdPrefixRange.readAll(etcd, "v1/instances/dynamo/", deadline(), 4, key -> {
        });
        assertThat(result.entries()).extracting(EtcdReader.Entry::keyText).hasSize(10).isSorted();
        assertThat(result.revision()).isEqualTo(42);
        assertThat(etcd.calls).containsExactly("v1/instances/dynamo/@0x4", "v1/instances/dynamo/k3\\0@42x4",
                "v1/instances/dynamo/k7\\0@42x4");
    }

    @Test
    void aPageThatDoesNotFitIsHalvedAndAnUnreceivableKeyIsSteppedOver() throws Exception {
        FakeEtcd etcd = new FakeEtcd();
        etcd.maxResponseBytes = 100;
        for (int i = 0; i < 6; i++) {
            etcd.store.put("p/k" + i, new byte[30]);
        }
        etcd.store.put("p/k3", new byte[500]);
        List<String> unreceivable = new ArrayList<>();
        EtcdPrefixRange.Result result = EtcdPrefixRange.readAll(etcd, "p/", deadline(), 8, unreceivable::add);
        assertThat(result.entries()).extracting(EtcdReader.Entry::keyText).containsExactly("p/k0", "p/k1", "p/k2",
                "p/k4", "p/k5");
        assertThat(unreceivable).containsExactly("p/k3");
        // The keys-only read starts after the last good key and finds k3 there.
        assertThat(etcd.calls).contains("p/k2\\0@" + result.revision() + "x1 keys");
    }

    @Test
    void otherErrorsFailTheRead() {
        EtcdReader failing = new FakeEtcd() {
            @Override
            public RangePage range(String prefix, byte[] fromKey, long atRevision, int limit, boolean keysOnly,
                                   Duration timeout) throws EtcdReadException {
                throw new EtcdReadException(EtcdReadException.Kind.COMPACTED, "compacted", new RuntimeException());
            }
        };
        assertThatThrownBy(() -> EtcdPrefixRange.readAll(failing, "p/", deadline(), 8, key -> {
        })).isInstanceOf(EtcdReadException.class);
    }

    @Test
    void anExpiredDeadlineIsATimeout() {
        assertThatThrownBy(() -> EtcdPrefixRange.readAll(new FakeEtcd(), "p/", System.nanoTime() - 1, 8, key -> {
        })).isInstanceOfSatisfying(EtcdReadException.class,
                e -> assertThat(e.kind()).isEqualTo(EtcdReadException.Kind.TIMEOUT));
    }

    @Test
    void thePrefixEndIsTheNextKeyAfterEveryKeyWithThePrefix() {
        assertThat(JetcdReader.prefixEnd("v1/mdc/".getBytes(StandardCharsets.UTF_8)))
                .isEqualTo("v1/mdc0".getBytes(StandardCharsets.UTF_8));
        assertThat(JetcdReader.prefixEnd(new byte[] {'a', (byte) 0xff})).isEqualTo(new byte[] {'b'});
        assertThat(JetcdReader.prefixEnd(new byte[] {(byte) 0xff})).isEqualTo(new byte[] {0});
        assertThat(EtcdPrefixRange.after("k".getBytes(StandardCharsets.UTF_8))).isEqualTo(new byte[] {'k', 0});
        assertThat(Arrays.compareUnsigned(EtcdPrefixRange.after(new byte[] {(byte) 0xff}), new byte[] {(byte) 0xff}))
                .isPositive();
    }
}
