package dev.continuum.router.sim;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The frontend emulator's check of {@code nvext.token_data}: a real {@code dynamo.frontend} trusts the IDs and skips
 * tokenizing, so a router that sends wrong ones silently changes the prompt. With a check installed
 * ({@link DirectFrontend#verifyTokenData}), every chat body that carries {@code token_data} must carry exactly the
 * {@link TokenDataReference}'s IDs for that very body, else the emulator answers 400 with the first difference. A
 * body without {@code token_data} passes (the frontend would tokenize it itself). The reference runs on the
 * emulator's event loop: this is a test tool, and its callers wait for its answer anyway.
 */
public final class TokenDataCheck {
    private final TokenDataReference reference;
    private final AtomicLong verified = new AtomicLong();
    private final List<String> mismatches = new CopyOnWriteArrayList<>();

    TokenDataCheck(TokenDataReference reference) {
        this.reference = reference;
    }

    /** Bodies whose {@code token_data} equalled the reference's IDs. */
    public long verified() {
        return verified.get();
    }

    /** Why each refused body was refused, oldest first. */
    public List<String> mismatches() {
        return List.copyOf(mismatches);
    }

    /** Null when {@code body} may be served, else the refusal's message (also kept in {@link #mismatches}). */
    @Nullable String refusal(String body) {
        ReceivedChat chat = ReceivedChat.of(body, 0);
        long[] got = chat.tokenData();
        if (!chat.tokenDataValid()) {
            return refuse("nvext.token_data is not an array of unsigned 32-bit token IDs");
        }
        if (got == null) {
            return null;
        }
        long[] expected;
        try {
            expected = reference.tokenIds(body);
        } catch (Exception e) {
            return refuse("the reference tokenizer failed: " + e);
        }
        int at = Arrays.mismatch(got, expected);
        if (at >= 0) {
            return refuse("nvext.token_data differs from the reference tokenization at index " + at + " (got "
                    + (at < got.length ? Long.toString(got[at]) : "nothing") + ", expected "
                    + (at < expected.length ? Long.toString(expected[at]) : "nothing") + "; " + got.length + " vs "
                    + expected.length + " IDs)");
        }
        verified.incrementAndGet();
        return null;
    }

    private String refuse(String why) {
        mismatches.add(why);
        return why;
    }
}
