package dev.continuum.router.proxy.metrics;

/** The {@code status_class} label of an upstream attempt; {@link #ERROR} = no response (connect, timeout, reset). */
public enum StatusClass {
    S2XX("2xx"), S3XX("3xx"), S4XX("4xx"), S5XX("5xx"), ERROR("error");

    private final String label;

    StatusClass(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    /** 1xx never reaches here (informational answers are skipped), so it folds into 2xx. */
    public static StatusClass of(int status) {
        if (status >= 500) {
            return S5XX;
        } else if (status >= 400) {
            return S4XX;
        } else if (status >= 300) {
            return S3XX;
        }
        return S2XX;
    }
}
