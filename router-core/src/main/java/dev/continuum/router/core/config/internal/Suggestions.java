package dev.continuum.router.core.config.internal;

import java.util.Collection;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/** "Did you mean" for unknown keys: the nearest known key by optimal-string-alignment (Damerau) distance. */
public final class Suggestions {
    private Suggestions() {
    }

    /**
     * The candidate nearest to {@code key}, or null when none is close enough. Case and the
     * {@code _}/{@code -} separators are ignored first, so {@code bindAddress} finds {@code bind_address}.
     * A candidate qualifies within distance {@code max(1, length / 4)} (at most 3): close enough for a
     * typo, far enough that a short unrelated key gets no suggestion.
     */
    public static @Nullable String nearest(String key, Collection<String> candidates) {
        String normalizedKey = normalize(key);
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String candidate : candidates) {
            if (candidate.equals(key)) {
                continue;
            }
            String normalized = normalize(candidate);
            int d = normalized.equals(normalizedKey) ? 0 : distance(key.toLowerCase(Locale.ROOT), candidate);
            int limit = Math.min(3, Math.max(1, candidate.length() / 4));
            if (d <= limit && d < bestDistance) {
                best = candidate;
                bestDistance = d;
            }
        }
        return best;
    }

    private static String normalize(String s) {
        return s.toLowerCase(Locale.ROOT).replace("_", "").replace("-", "");
    }

    /** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. */
    public static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
