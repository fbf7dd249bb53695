package dev.continuum.router.kv.prompt;

import com.hubspot.jinjava.objects.date.StrftimeFormatter;
import java.time.ZonedDateTime;
import org.jspecify.annotations.Nullable;

/** The globals transformers adds to its chat-template environment, bound as jinjava functions. */
final class TemplateFunctions {
    private TemplateFunctions() {
    }

    /** {@code raise_exception(message)}: the template refuses the conversation; the render fails. */
    public static Object raiseException(@Nullable Object message) {
        throw RenderBudget.failCurrent(new TemplateFailure("raise_exception: " + message));
    }

    /** {@code strftime_now(format)}: the current local time, formatted like Python's {@code strftime}. */
    public static String strftimeNow(String format) {
        return StrftimeFormatter.format(ZonedDateTime.now(), format);
    }
}
