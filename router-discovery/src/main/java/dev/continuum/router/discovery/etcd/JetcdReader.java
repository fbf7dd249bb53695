package dev.continuum.router.discovery.etcd;

import dev.continuum.router.discovery.config.EtcdConfig;
import dev.continuum.router.discovery.config.EtcdTlsConfig;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.discovery.reducer.DiscoveryLimits;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.common.exception.CompactedException;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.grpc.Status;
import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.File;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;

/**
 * {@link EtcdReader} over jetcd. Uses only {@code KV.get} and {@code Watch.watch}; authentication is
 * jetcd's Authenticate RPC with the configured user (it refreshes the token itself).
 */
final class JetcdReader implements EtcdReader {
    /**
     * gRPC's default inbound limit is 4 MiB; a single record may be up to {@code MAX_RECORD_BYTES} (the
     * reducer refuses larger ones after receiving them), plus framing. Pages are sized down when a response
     * would not fit.
     */
    static final int MAX_INBOUND_MESSAGE_BYTES = DiscoveryLimits.MAX_RECORD_BYTES + 1024 * 1024;
    /** Bounds the dial only; the first listing as a whole is bounded by the watcher's seed timeout. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /**
     * When a connection drops, every watch stream fails at once and jetcd schedules its own resume of each
     * (after calling our listener). Closing the client at once would make those schedules fail noisily on a
     * terminated executor; the watches are already closed (so nothing resumes), and the client follows shortly,
     * on a scheduler the discovery supervisor owns (and drains when it stops).
     */
    static final Duration CLOSE_DELAY = Duration.ofSeconds(1);

    private final Client client;
    private final @Nullable ScheduledExecutorService closer;
    private final KV kv;
    private final Watch watch;
    private final AtomicBoolean closed = new AtomicBoolean();

    private JetcdReader(Client client, @Nullable ScheduledExecutorService closer) {
        this.client = client;
        this.closer = closer;
        this.kv = client.getKVClient();
        this.watch = client.getWatchClient();
    }

    static JetcdReader connect(EtcdConfig config, @Nullable ScheduledExecutorService closer) {
        ClientBuilder builder = Client.builder()
                .endpoints(config.endpoints().stream().map(URI::create).toArray(URI[]::new))
                .maxInboundMessageSize(MAX_INBOUND_MESSAGE_BYTES)
                .connectTimeout(CONNECT_TIMEOUT)
                // Fail fast when etcd is unreachable: the watcher's backoff decides when to try again.
                .waitForReady(false);
        if (config.usesTls()) {
            builder.sslContext(sslContext(config.tls()));
            if (config.tls() != null && config.tls().serverName() != null) {
                builder.authority(config.tls().serverName());
            }
        }
        if (config.auth() != null) {
            builder.user(ByteSequence.from(config.auth().username(), StandardCharsets.UTF_8))
                    .password(ByteSequence.from(config.auth().password().reveal(), StandardCharsets.UTF_8));
        }
        return new JetcdReader(builder.build(), closer);
    }

    private static io.netty.handler.ssl.SslContext sslContext(@Nullable EtcdTlsConfig tls) {
        SslContextBuilder ssl = GrpcSslContexts.forClient();
        if (tls != null) {
            if (tls.caCert() != null) {
                ssl.trustManager(tls.caCert().toFile());
            }
            if (tls.clientCert() != null && tls.clientKey() != null) {
                ssl.keyManager(tls.clientCert().toFile(), new File(tls.clientKey().reveal()));
            }
        }
        try {
            return ssl.build();
        } catch (SSLException e) {
            throw new IllegalArgumentException("dynamo.discovery.etcd.tls: " + e.getMessage(), e);
        }
    }

    @Override
    public RangePage range(String prefix, byte[] fromKey, long revision, int limit, boolean keysOnly,
                           Duration timeout) throws EtcdReadException, InterruptedException {
        GetOption option = GetOption.builder()
                .withRange(ByteSequence.from(prefixEnd(prefix.getBytes(StandardCharsets.UTF_8))))
                .withRevision(revision)
                .withLimit(limit)
                .withKeysOnly(keysOnly)
                .build();
        CompletableFuture<GetResponse> future = kv.get(ByteSequence.from(fromKey), option);
        GetResponse response;
        try {
            response = future.get(Math.max(1, timeout.toMillis()), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new EtcdReadException(EtcdReadException.Kind.TIMEOUT, "no answer within " + timeout.toMillis()
                    + " ms reading " + prefix, e);
        } catch (InterruptedException e) {
            future.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            throw classify(prefix, e.getCause() == null ? e : e.getCause());
        }
        List<Entry> entries = new ArrayList<>(response.getKvs().size());
        for (KeyValue kv : response.getKvs()) {
            entries.add(new Entry(kv.getKey().getBytes(), keysOnly ? new byte[0] : kv.getValue().getBytes()));
        }
        return new RangePage(entries, response.getHeader().getRevision(), response.isMore());
    }

    private static EtcdReadException classify(String prefix, Throwable cause) {
        Status.Code code = statusCode(cause);
        String message = "reading " + prefix + ": " + cause.getMessage();
        if (code == Status.Code.RESOURCE_EXHAUSTED) {
            return new EtcdReadException(EtcdReadException.Kind.TOO_LARGE, message, cause);
        }
        if (cause instanceof CompactedException
                || (code == Status.Code.OUT_OF_RANGE && String.valueOf(cause.getMessage()).contains("compacted"))) {
            return new EtcdReadException(EtcdReadException.Kind.COMPACTED, message, cause);
        }
        return new EtcdReadException(EtcdReadException.Kind.FAILED, message, cause);
    }

    private static Status.@Nullable Code statusCode(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof EtcdException etcd && etcd.getErrorCode() != null) {
                ErrorCode code = etcd.getErrorCode();
                try {
                    return Status.Code.valueOf(code.name());
                } catch (IllegalArgumentException e) {
                    return Status.Code.UNKNOWN;
                }
            }
            Status status = Status.fromThrowable(t);
            if (status.getCode() != Status.Code.UNKNOWN) {
                return status.getCode();
            }
        }
        return null;
    }

    @Override
    public WatchHandle watch(String prefix, long fromRevision, WatchListener listener) {
        WatchOption option = WatchOption.builder()
                .withRange(ByteSequence.from(prefixEnd(prefix.getBytes(StandardCharsets.UTF_8))))
                .withRevision(fromRevision)
                .withCreateNotify(true)
                .build();
        AtomicBoolean over = new AtomicBoolean();
        Watch.Watcher watcher = watch.watch(ByteSequence.from(prefix, StandardCharsets.UTF_8), option,
                new Watch.Listener() {
                    @Override
                    public void onNext(WatchResponse response) {
                        if (over.get()) {
                            return;
                        }
                        if (response.isCreatedNotify()) {
                            listener.opened();
                            return;
                        }
                        List<WatchEvent> events = response.getEvents();
                        if (events.isEmpty()) {
                            return;
                        }
                        List<DiscoveryEvent> converted = new ArrayList<>(events.size());
                        for (WatchEvent event : events) {
                            String key = event.getKeyValue().getKey().toString(StandardCharsets.UTF_8);
                            converted.add(switch (event.getEventType()) {
                                case PUT -> new DiscoveryEvent.Put(key, event.getKeyValue().getValue().getBytes());
                                case DELETE -> new DiscoveryEvent.Delete(key);
                                // A newer server's event type: the view could be wrong, so end and resync.
                                case UNRECOGNIZED -> null;
                            });
                        }
                        if (converted.contains(null)) {
                            end(new WatchEnd(WatchEnd.Kind.ERROR, "unrecognized watch event type", null));
                            return;
                        }
                        listener.events(converted);
                    }

                    @Override
                    public void onError(Throwable error) {
                        if (error instanceof CompactedException compacted) {
                            end(new WatchEnd(WatchEnd.Kind.COMPACTED, "watch start revision compacted (compact revision "
                                    + compacted.getCompactedRevision() + ")", error));
                        } else if (statusCode(error) == Status.Code.FAILED_PRECONDITION
                                || statusCode(error) == Status.Code.OUT_OF_RANGE
                                || statusCode(error) == Status.Code.CANCELLED) {
                            end(new WatchEnd(WatchEnd.Kind.CANCELLED, "watch cancelled: " + error.getMessage(), error));
                        } else {
                            end(new WatchEnd(WatchEnd.Kind.ERROR, "watch failed: " + error.getMessage(), error));
                        }
                    }

                    @Override
                    public void onCompleted() {
                        end(new WatchEnd(WatchEnd.Kind.COMPLETED, "watch stream completed", null));
                    }

                    private void end(WatchEnd end) {
                        // Only the first end counts; jetcd's own silent resume after an error is ignored.
                        if (over.compareAndSet(false, true)) {
                            listener.ended(end);
                        }
                    }
                });
        return () -> {
            // Closing makes jetcd call onCompleted: mark the watch over first so that is not reported.
            over.set(true);
            watcher.close();
        };
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (closer != null) {
            try {
                closer.schedule(client::close, CLOSE_DELAY.toMillis(), TimeUnit.MILLISECONDS);
                return;
            } catch (RejectedExecutionException stopped) {
                // The supervisor has stopped (a watcher abandoned at its stop closes late): close now.
            }
        }
        client.close();
    }

    /** The smallest key after every key that starts with {@code prefix} (etcd's prefix range end). */
    static byte[] prefixEnd(byte[] prefix) {
        byte[] end = Arrays.copyOf(prefix, prefix.length);
        for (int i = end.length - 1; i >= 0; i--) {
            if (end[i] != (byte) 0xff) {
                end[i]++;
                return Arrays.copyOf(end, i + 1);
            }
        }
        // All 0xff (or empty): the range runs to the end of the keyspace.
        return new byte[] {0};
    }
}
