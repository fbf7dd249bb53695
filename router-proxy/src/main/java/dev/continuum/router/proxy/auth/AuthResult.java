package dev.continuum.router.proxy.auth;

import dev.continuum.router.core.config.ApiKeyConfig;

/** The outcome of checking a request's API key. */
public sealed interface AuthResult {

    /** No key was needed or given; the client's credentials are forwarded untouched. */
    record Anonymous() implements AuthResult {
    }

    /** A router key matched; {@code source} says which header carried it (it is not forwarded). */
    record Authenticated(ApiKeyConfig key, CredentialSource source) implements AuthResult {
    }

    /** 401: missing, unknown, disabled or expired key. The message never contains the key. */
    record Rejected(String message) implements AuthResult {
    }

    /** The header a router key came from. */
    enum CredentialSource {
        AUTHORIZATION, X_API_KEY
    }

    AuthResult ANONYMOUS = new Anonymous();
}
