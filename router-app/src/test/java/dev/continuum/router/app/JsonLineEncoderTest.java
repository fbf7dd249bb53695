package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** One event, one line of JSON with the formatted message; java.util.logging arrives through the bridge. */
class JsonLineEncoderTest {
    private final LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();

    @Test
    void anEventIsOneLineWithTheFormattedMessageIsoTimestampMdcAndTheException() throws Exception {
        Logger logger = context.getLogger("dev.continuum.test");
        LoggingEvent event = new LoggingEvent(Logger.class.getName(), logger, Level.WARN,
                "backend {} said {}", new IllegalStateException("boom"), new Object[] {"a", "two\nlines\u0007"});
        event.setMDCPropertyMap(Map.of("request_id", "r-1"));
        JsonLineEncoder encoder = new JsonLineEncoder();
        encoder.setContext(context);
        encoder.start();

        String line = new String(encoder.encode(event), StandardCharsets.UTF_8);

        assertThat(line).endsWith("\n");
        assertThat(line.substring(0, line.length() - 1)).doesNotContain("\n", "\u0007");
        JsonNode json = new ObjectMapper().readTree(line);
        assertThat(json.get("message").asText()).isEqualTo("backend a said two\nlines\u0007");
        assertThat(json.get("level").asText()).isEqualTo("WARN");
        assertThat(json.get("logger").asText()).isEqualTo("dev.continuum.test");
        assertThat(json.get("thread").asText()).isEqualTo(Thread.currentThread().getName());
        assertThat(OffsetDateTime.parse(json.get("timestamp").asText()).toInstant()).isEqualTo(
                event.getInstant().truncatedTo(java.time.temporal.ChronoUnit.MILLIS));
        assertThat(json.get("mdc").get("request_id").asText()).isEqualTo("r-1");
        assertThat(json.get("exception").asText()).startsWith("java.lang.IllegalStateException: boom")
                .contains("\tat ");
    }

    @Test
    void javaUtilLoggingIsBridgedIntoLogbackWithItsParametersFilledIn() {
        Logger target = context.getLogger("io.grpc.bridge.test");
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.setContext(context);
        appender.start();
        target.addAppender(appender);
        try {
            LoggingSetup.bridgeJavaUtilLogging();
            java.util.logging.Logger.getLogger("io.grpc.bridge.test").log(java.util.logging.Level.WARNING,
                    "channel {0} failed", "etcd-1");

            assertThat(appender.list).singleElement().satisfies(e -> {
                assertThat(e.getFormattedMessage()).isEqualTo("channel etcd-1 failed");
                assertThat(e.getLevel()).isEqualTo(Level.WARN);
            });
        } finally {
            target.detachAppender(appender);
        }
    }
}
