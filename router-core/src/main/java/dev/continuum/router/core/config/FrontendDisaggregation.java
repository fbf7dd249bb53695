package dev.continuum.router.core.config;

/**
 * Marks a bound {@code dynamo} section whose presence means prefill and decode happen inside a Dynamo
 * direct-mode frontend whose replicas are ordinary {@code role: unified} backends (the shim), so
 * {@code disaggregated_serving} needs no prefill or decode backend of its own. Core finds it by type with
 * {@link DynamoConfig#find(Class)}, without knowing the module that binds it.
 */
public interface FrontendDisaggregation {
}
