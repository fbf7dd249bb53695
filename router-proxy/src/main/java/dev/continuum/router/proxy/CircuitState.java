package dev.continuum.router.proxy;

/** A backend's circuit breaker state, with the value of {@code continuum_backend_circuit_state}. */
public enum CircuitState {
    CLOSED(0), HALF_OPEN(1), OPEN(2);

    private final int gaugeValue;

    CircuitState(int gaugeValue) {
        this.gaugeValue = gaugeValue;
    }

    public int gaugeValue() {
        return gaugeValue;
    }
}
