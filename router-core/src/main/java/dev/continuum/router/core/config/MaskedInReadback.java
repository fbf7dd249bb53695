package dev.continuum.router.core.config;

/**
 * A config value that the readback ({@code config show}, {@code GET /admin/config}, the config history) shows
 * as {@link Secret#MASK}, like a {@link Secret}, though the value is not itself a usable credential: a
 * credential's digest, for example, which still tells a reader which token opens the bus and lets one be
 * tested offline.
 */
public interface MaskedInReadback {
    /** The value as the loader reads it back: only for the revealing readback that tests load back. */
    String revealedValue();
}
