package dev.continuum.router.app;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import dev.continuum.router.core.config.LoggingConfig;
import java.util.Locale;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * Applies {@code logging} (level and format) to Logback at startup and on every reload, so an
 * operator can turn on debug logging without a restart. Only the root level and the console
 * encoder change; loggers configured in {@code logback.xml} keep their own levels.
 */
final class LoggingSetup {
    private static final String PATTERN = "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{36} - %msg%n";
    private static volatile LoggingConfig.Format currentFormat = LoggingConfig.Format.TEXT;

    private LoggingSetup() {
    }

    static synchronized void apply(LoggingConfig config) {
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
            return; // another SLF4J binding is in charge (tests, embedding): leave it alone
        }
        Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.toLevel(config.level().name().toLowerCase(Locale.ROOT), Level.INFO));
        if (config.format() == currentFormat) {
            return;
        }
        if (root.getAppender("STDOUT") instanceof ConsoleAppender<ILoggingEvent> console) {
            Encoder<ILoggingEvent> encoder = config.format() == LoggingConfig.Format.JSON ? json(context) : text(context);
            console.stop();
            console.setEncoder(encoder);
            console.start();
            currentFormat = config.format();
        }
    }

    /**
     * Routes java.util.logging (gRPC, jetcd, the JDK's HTTP client) into SLF4J, so those lines get the
     * same level and format as the router's own. logback.xml's LevelChangePropagator keeps JUL's levels in
     * step with Logback's, so a disabled JUL line is dropped before it is built.
     */
    static synchronized void bridgeJavaUtilLogging() {
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext) || SLF4JBridgeHandler.isInstalled()) {
            return;
        }
        SLF4JBridgeHandler.removeHandlersForRootLogger();
        SLF4JBridgeHandler.install();
    }

    private static Encoder<ILoggingEvent> json(LoggerContext context) {
        JsonLineEncoder encoder = new JsonLineEncoder();
        encoder.setContext(context);
        encoder.start();
        return encoder;
    }

    private static Encoder<ILoggingEvent> text(LoggerContext context) {
        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(context);
        encoder.setPattern(PATTERN);
        encoder.start();
        return encoder;
    }
}
