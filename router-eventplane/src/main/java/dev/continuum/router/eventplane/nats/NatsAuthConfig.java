package dev.continuum.router.eventplane.nats;

import dev.continuum.router.core.config.Secret;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * {@code dynamo.nats.auth}: exactly one way to authenticate (the binder refuses a block naming two): a token, a
 * user and password, an NKey seed, or a credentials file (a user JWT and its NKey seed, as {@code nsc} writes
 * them). Secrets are masked in every readback; the credentials file is a path and is shown.
 */
public record NatsAuthConfig(@Nullable Secret token, @Nullable String username, @Nullable Secret password,
                             @Nullable Secret nkeySeed, @Nullable Path credentialsFile) {
}
