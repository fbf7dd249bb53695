package dev.continuum.router.kv.prompt;

import dev.continuum.router.kv.hash.ByteBoundedCache;

/**
 * Rendered conversation prefixes by the key of their messages ({@link PrefixRender#keys}): what a later turn of
 * the same conversation reuses instead of rendering and tokenizing its earlier messages again. An entry keeps
 * the prefix's token IDs, its rendered length in UTF-8 bytes and the end of its text (to check the join with
 * what follows), not the text itself. Bounded in bytes ({@code dynamo.kv.render_cache_bytes}), least recently
 * used first out.
 */
final class RenderCache extends ByteBoundedCache<RenderCache.Prefix> {
    /**
     * @param ids       the prefix's token IDs (owned by the cache; never written)
     * @param utf8Bytes the rendered prefix's length in UTF-8 bytes
     * @param tail      the rendered prefix's last characters (as many as the longest added token)
     */
    record Prefix(int[] ids, int utf8Bytes, String tail) {
    }

    RenderCache(long maxBytes, Listener listener) {
        super(maxBytes, listener);
    }

    @Override
    protected long weigh(Prefix p) {
        return 4L * p.ids().length + 2L * p.tail().length() + 32;
    }
}
