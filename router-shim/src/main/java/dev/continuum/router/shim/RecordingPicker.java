package dev.continuum.router.shim;

import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.shim.decisions.DecisionLog;
import dev.continuum.router.shim.decisions.DecisionSettings;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A picker whose every pick is recorded in a {@link DecisionLog}, as the dispatcher records the picks it plans
 * with: for benchmarks and tools that run a picker without the dispatcher.
 */
public final class RecordingPicker implements DynamoWorkerPicker {
    private final DynamoWorkerPicker picker;
    private final DecisionRecorder recorder;

    public RecordingPicker(DynamoWorkerPicker picker, DecisionLog log) {
        this.picker = Objects.requireNonNull(picker, "picker");
        this.recorder = new DecisionRecorder(log, System::currentTimeMillis);
    }

    @Override
    public @Nullable Selection pick(DynamoSnapshot snapshot, PickRequest request) {
        DecisionSettings armed = recorder.begin();
        Selection s = picker.pick(snapshot, request);
        if (s == null) {
            DecisionRecorder.disarm();
        } else {
            recorder.commit(armed, request, s);
        }
        return s;
    }
}
