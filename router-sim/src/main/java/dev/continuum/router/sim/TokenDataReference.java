package dev.continuum.router.sim;

/**
 * An independent rendering and tokenization of a chat-completion body (its {@code nvext} ignored), as the worker's
 * own frontend would compute it when no {@code nvext.token_data} is given: what {@link TokenDataCheck} compares a
 * router's {@code token_data} with.
 */
@FunctionalInterface
public interface TokenDataReference {
    /** The prompt's token IDs (unsigned 32-bit values); throws when the reference cannot answer. */
    long[] tokenIds(String body) throws Exception;
}
