package dev.continuum.router.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(60)
class EtcdExtensionTest {
    @Nested
    class Plain {
        @RegisterExtension
        static final EtcdExtension etcd = EtcdExtension.plain();

        @Test
        void servesWritesAndKeepsItsDataAcrossAKill() throws Exception {
            long revision = etcd.put("v1/instances/dynamo/decode/generate/1", "{}");
            assertThat(etcd.revision()).isEqualTo(revision);
            etcd.kill();
            etcd.start();
            assertThat(etcd.revision()).isEqualTo(revision);
            assertThat(etcd.etcdctl("get", "--prefix", "v1/")).contains("v1/instances/dynamo/decode/generate/1");
        }
    }

    @Nested
    class Tls {
        @RegisterExtension
        static final EtcdExtension etcd = EtcdExtension.tls();

        @Test
        void servesHttpsWithTheGeneratedCertificates() throws Exception {
            assertThat(etcd.endpoint()).startsWith("https://127.0.0.1:");
            etcd.put("k", "v");
            assertThat(etcd.etcdctl("get", "k")).contains("v");
        }
    }

    @Nested
    class Auth {
        @RegisterExtension
        static final EtcdExtension etcd = EtcdExtension.withAuth();

        @Test
        void theReaderUserCanReadButNotWrite() throws Exception {
            etcd.put("v1/instances/x", "y");
            assertThat(etcd.etcdctl("--user", EtcdExtension.READER_USER + ":" + EtcdExtension.READER_PASSWORD,
                    "get", "--prefix", "v1/")).contains("v1/instances/x");
            assertThatThrownBy(() -> etcd.etcdctl("--user", EtcdExtension.READER_USER + ":" + EtcdExtension.READER_PASSWORD,
                    "put", "v1/instances/x", "z")).hasMessageContaining("permission denied");
        }
    }
}
