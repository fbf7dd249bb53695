package dev.continuum.router.replicas;

import dev.continuum.router.load.SampleKey;
import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/** One change of a replica's active-sequence accounting, as it travels between replicas (docs/replicas.md). */
sealed interface SyncEvent {
    /** The sender's number for the sequence, unique per sender epoch. */
    long id();

    /**
     * A dispatch that now counts: {@code blocks} on the decode rank until the end, and on the prefill rank of a pair
     * until the first token; {@code prefillTokens} on the prefilling rank until the first token.
     */
    record Add(long id, SampleKey decode, @Nullable SampleKey prefill, long prefillTokens, long blocks)
            implements SyncEvent {
        public Add {
            Objects.requireNonNull(decode, "decode");
        }
    }

    /** The first response bytes of sequence {@code id} came back: its prefill part no longer counts. */
    record First(long id) implements SyncEvent {
    }

    /** Sequence {@code id} no longer counts. */
    record End(long id) implements SyncEvent {
    }

    /**
     * In approximate mode, what sequence {@code id}'s prefilling rank is predicted to hold: its prompt's chained
     * block keys at every {@code stride}-th block (router-shim's {@code SharedPredictions}). Follows its add.
     */
    record Predict(long id, int stride, long[] keys) implements SyncEvent {
        public Predict {
            Objects.requireNonNull(keys, "keys");
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Predict p && p.id == id && p.stride == stride && Arrays.equals(p.keys, keys);
        }

        @Override
        public int hashCode() {
            return Objects.hash(id, stride, Arrays.hashCode(keys));
        }

        @Override
        public String toString() {
            return "Predict[id=" + id + ", stride=" + stride + ", keys=" + keys.length + "]";
        }
    }

    /** Session {@code session} is bound to decode rank {@code rank} for {@code ttlMillis} from its receipt. */
    record Bind(String session, SampleKey rank, long ttlMillis) implements SyncEvent {
        public Bind {
            Objects.requireNonNull(session, "session");
            Objects.requireNonNull(rank, "rank");
        }

        @Override
        public long id() {
            return 0;
        }
    }
}
