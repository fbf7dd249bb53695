package dev.continuum.router.discovery.etcd;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * Reads a whole prefix in pages at one pinned revision: the first page fixes the revision, every later page
 * reads at it, so the result is one consistent cut even while workers come and go (a compaction between
 * pages fails the read and the pass is retried). jetcd's inbound limit makes one response for 16,384
 * workers with cards impossible; a page that still does not fit is halved, and a single key too large to
 * receive is stepped over (reported, never fatal).
 */
final class EtcdPrefixRange {
    /** Keys per page to start with; typical Dynamo records are 0.3 to 4 KiB. */
    static final int PAGE_LIMIT = 512;

    private EtcdPrefixRange() {
    }

    /**
     * @param entries  every key under the prefix at {@code revision}, in key order
     * @param revision the store revision of the read
     */
    record Result(List<EtcdReader.Entry> entries, long revision) {
    }

    /**
     * @param deadlineNanos {@code System.nanoTime()} by which the read must be done
     * @param unreceivable  told the key of each record too large to receive
     */
    static Result readAll(EtcdReader reader, String prefix, long deadlineNanos, int pageLimit,
                          Consumer<String> unreceivable) throws EtcdReadException, InterruptedException {
        List<EtcdReader.Entry> entries = new ArrayList<>();
        byte[] fromKey = prefix.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        long revision = 0;
        int limit = pageLimit;
        while (true) {
            EtcdReader.RangePage page;
            try {
                page = reader.range(prefix, fromKey, revision, limit, false, remaining(prefix, deadlineNanos));
            } catch (EtcdReadException e) {
                if (e.kind() != EtcdReadException.Kind.TOO_LARGE) {
                    throw e;
                }
                if (limit > 1) {
                    limit = Math.max(1, limit / 2);
                    continue;
                }
                EtcdReader.RangePage keyOnly =
                        reader.range(prefix, fromKey, revision, 1, true, remaining(prefix, deadlineNanos));
                if (keyOnly.entries().isEmpty()) {
                    throw e;
                }
                if (revision == 0) {
                    revision = keyOnly.revision();
                }
                byte[] key = keyOnly.entries().get(0).key();
                unreceivable.accept(keyOnly.entries().get(0).keyText());
                fromKey = after(key);
                if (!keyOnly.more()) {
                    return new Result(entries, revision);
                }
                continue;
            }
            if (revision == 0) {
                revision = page.revision();
            }
            entries.addAll(page.entries());
            // One large record shrank the pages; grow them back for the ordinary records after it.
            limit = Math.min(pageLimit, limit * 2);
            if (!page.more() || page.entries().isEmpty()) {
                return new Result(entries, revision);
            }
            byte[] last = page.entries().get(page.entries().size() - 1).key();
            if (Arrays.compareUnsigned(last, fromKey) < 0) {
                throw new EtcdReadException(EtcdReadException.Kind.FAILED, "range of " + prefix + " went backwards",
                        new IllegalStateException("page ended before its start key"));
            }
            fromKey = after(last);
        }
    }

    /** The smallest key greater than {@code key}. */
    static byte[] after(byte[] key) {
        return Arrays.copyOf(key, key.length + 1);
    }

    private static Duration remaining(String prefix, long deadlineNanos) throws EtcdReadException {
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
            throw new EtcdReadException(EtcdReadException.Kind.TIMEOUT, "seed timeout reading " + prefix,
                    new java.util.concurrent.TimeoutException());
        }
        return Duration.ofNanos(left);
    }
}
