package dev.continuum.router.proxy.metrics;

/**
 * Every metric name and label key of the ingress and proxy, in one place. Names are Micrometer's
 * dotted form; the Prometheus registry exposes them with underscores and the unit or
 * {@code _total} suffix given beside each one. {@code docs/metrics.md} lists the label values.
 */
public final class MetricNames {
    /** {@code http_requests_total{method,endpoint,status}}: kept from the Rust router, unprefixed. */
    public static final String HTTP_REQUESTS = "http.requests";
    /** {@code http_request_duration_seconds{method,endpoint}}: histogram, request received to response end. */
    public static final String HTTP_REQUEST_DURATION = "http.request.duration";
    /** {@code continuum_backend_requests_total{backend,status_class}}: one per upstream attempt. */
    public static final String BACKEND_REQUESTS = "continuum.backend.requests";
    /** {@code continuum_backend_request_duration_seconds{backend}}: histogram, attempt start to response head. */
    public static final String BACKEND_REQUEST_DURATION = "continuum.backend.request.duration";
    /** {@code continuum_backend_healthy{backend}}: 1 when routable by health (unknown or healthy), else 0. */
    public static final String BACKEND_HEALTHY = "continuum.backend.healthy";
    /** {@code continuum_backend_circuit_state{backend}}: 0 closed, 1 half_open, 2 open. */
    public static final String BACKEND_CIRCUIT_STATE = "continuum.backend.circuit.state";
    /** {@code continuum_retries_total{backend,reason}}: backend = the one that failed and caused the retry. */
    public static final String RETRIES = "continuum.retries";
    public static final String MODEL_FALLBACKS = "continuum.model.fallbacks";
    /** {@code continuum_rate_limited_total{tier}}. */
    public static final String RATE_LIMITED = "continuum.rate.limited";
    /** {@code continuum_stream_aborts_total{side,reason}}: responses cut after their head went to the client. */
    public static final String STREAM_ABORTS = "continuum.stream.aborts";

    public static final String TAG_METHOD = "method";
    public static final String TAG_ENDPOINT = "endpoint";
    public static final String TAG_STATUS = "status";
    public static final String TAG_BACKEND = "backend";
    public static final String TAG_STATUS_CLASS = "status_class";
    public static final String TAG_REASON = "reason";
    public static final String TAG_TIER = "tier";
    public static final String TAG_SIDE = "side";

    private MetricNames() {
    }
}
