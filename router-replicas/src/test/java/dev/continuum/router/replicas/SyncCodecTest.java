package dev.continuum.router.replicas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.load.SampleKey;
import dev.continuum.router.shim.SharedPredictions;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The replica-sync format round-trips, and every malformed or out-of-bound input is refused, never applied. */
class SyncCodecTest {
    private static final SampleKey D = new SampleKey(new WorkerId("dynamo", -5L), 3);
    private static final SampleKey P = new SampleKey(new WorkerId("dynamo", 7L), 0);

    private static byte[] batch(List<SyncEvent> events) {
        SyncCodec.Writer w = new SyncCodec.Writer();
        w.begin(SyncMessage.Kind.BATCH, "replica-1", 42L, 9, 0, 1);
        events.forEach(w::add);
        return w.finish();
    }

    @Test
    void roundTrips() {
        List<SyncEvent> events = List.of(new SyncEvent.Add(1, D, null, 700, 44), new SyncEvent.Add(2, D, P, 0, 1),
                new SyncEvent.First(1), new SyncEvent.End(2));
        SyncMessage m = SyncCodec.decode(batch(events));
        assertThat(m).isEqualTo(new SyncMessage(SyncMessage.Kind.BATCH, "replica-1", 42L, 9, 0, 1, events));
    }

    @Test
    void predictionsRoundTripInAVersionTwoMessageAndOnlyThere() {
        long[] keys = new long[SharedPredictions.MAX_KEYS];
        Arrays.setAll(keys, i -> -1L - i * 0x0101_0101_0101L);
        List<SyncEvent> events = List.of(new SyncEvent.Add(1, D, null, 700, 44),
                new SyncEvent.Predict(1, 32, keys), new SyncEvent.End(1));
        byte[] data = batch(events);
        assertThat(data[2]).as("version").isEqualTo((byte) 2);
        assertThat(SyncCodec.decode(data).events()).isEqualTo(events);
        assertThat(batch(List.of(new SyncEvent.End(1)))[2]).as("no prediction: version 1 as before").isEqualTo((byte) 1);

        byte[] asVersionOne = data.clone();
        asVersionOne[2] = 1;
        assertThatThrownBy(() -> SyncCodec.decode(asVersionOne)).isInstanceOf(SyncCodec.Malformed.class);
        for (int n = 0; n < data.length; n++) {
            byte[] cut = Arrays.copyOf(data, n);
            assertThatThrownBy(() -> SyncCodec.decode(cut)).isInstanceOf(SyncCodec.Malformed.class);
        }
    }

    @Test
    void refusesPredictionsOutsideTheirBounds() {
        long[] one = {7L};
        for (int stride : new int[] {0, 8, 24, 1024}) {
            byte[] bad = batch(List.of(new SyncEvent.Predict(1, stride, one)));
            assertThatThrownBy(() -> SyncCodec.decode(bad)).as("stride %d", stride)
                    .isInstanceOf(SyncCodec.Malformed.class);
        }
        for (int n : new int[] {0, SharedPredictions.MAX_KEYS + 1}) {
            byte[] bad = batch(List.of(new SyncEvent.Predict(1, 16, new long[n])));
            assertThatThrownBy(() -> SyncCodec.decode(bad)).as("%d keys", n).isInstanceOf(SyncCodec.Malformed.class);
        }
    }

    @Test
    void aDispatchCostsAboutThirtyBytesOnTheWire() {
        byte[] one = batch(List.of(new SyncEvent.Add(1000, D, null, 7000, 440), new SyncEvent.First(1000),
                new SyncEvent.End(1000)));
        byte[] empty = batch(List.of());
        assertThat(one.length - empty.length).isLessThan(48);
    }

    @Test
    void refusesTruncationsTrailingBytesAndBadCounts() {
        byte[] good = batch(List.of(new SyncEvent.Add(1, D, P, 700, 44)));
        for (int n = 0; n < good.length; n++) {
            byte[] cut = Arrays.copyOf(good, n);
            assertThatThrownBy(() -> SyncCodec.decode(cut)).isInstanceOf(SyncCodec.Malformed.class);
        }
        byte[] longer = Arrays.copyOf(good, good.length + 1);
        assertThatThrownBy(() -> SyncCodec.decode(longer)).isInstanceOf(SyncCodec.Malformed.class);
        byte[] badMagic = good.clone();
        badMagic[0] = 'X';
        assertThatThrownBy(() -> SyncCodec.decode(badMagic)).isInstanceOf(SyncCodec.Malformed.class);
    }

    @Test
    void randomBytesNeverEscapeAsAnythingButMalformed() {
        Random random = new Random(1);
        byte[] good = batch(List.of(new SyncEvent.Add(1, D, P, 700, 44), new SyncEvent.End(1)));
        for (int i = 0; i < 20_000; i++) {
            byte[] b = good.clone();
            for (int k = 0; k < 3; k++) {
                b[random.nextInt(b.length)] = (byte) random.nextInt();
            }
            try {
                SyncCodec.decode(b);
            } catch (SyncCodec.Malformed | IllegalArgumentException expected) {
                // refused
            }
        }
    }
}
