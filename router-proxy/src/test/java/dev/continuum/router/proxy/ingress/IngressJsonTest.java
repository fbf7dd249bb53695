package dev.continuum.router.proxy.ingress;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** IngressJson writes trees without the mapper's serializer context: the bytes must still be the mapper's. */
class IngressJsonTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @Test
    void aTreeIsWrittenByteForByteAsTheMapperWritesIt() throws Exception {
        ObjectNode n = IngressJson.object();
        n.put("text", "quote \" backslash \\ line\n tab\t ctl\u0001 caf\u00e9 \ud83d\ude00");
        n.put("int", 7).put("long", Long.MAX_VALUE).put("negative", -3).put("double", 0.25).put("float", 1.1f);
        n.put("big", new BigInteger("123456789012345678901234567890")).put("decimal", new BigDecimal("1.50"));
        n.put("short", (short) 3).put("yes", true).put("no", false).putNull("nothing");
        n.putArray("empty");
        n.putObject("nested").putArray("list").add(1).add("two").addObject().put("three", 3.0);
        JsonNode read = MAPPER.readTree("{\"a\":[1,2.5,\"x\",null,true,{\"b\":{}}],\"n\":12345678901234567890}");
        n.set("read", read);
        ByteBuf out = IngressJson.write(n, ByteBufAllocator.DEFAULT);
        try {
            assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo(new String(MAPPER.writeValueAsBytes(n), StandardCharsets.UTF_8));
        } finally {
            out.release();
        }
        ByteBuf event = Unpooled.buffer();
        IngressJson.writeEvent(event, "e", n);
        assertThat(event.toString(StandardCharsets.UTF_8))
                .isEqualTo("event: e\ndata: " + new String(MAPPER.writeValueAsBytes(n), StandardCharsets.UTF_8) + "\n\n");
    }

    @Test
    void requestsAreReadFromHeapAndDirectBuffersAlike() throws Exception {
        byte[] body = "  {\"model\":\"m\",\"n\":[1,2]}".getBytes(StandardCharsets.UTF_8);
        ByteBuf sliced = Unpooled.wrappedBuffer(("xx" + new String(body, StandardCharsets.UTF_8))
                .getBytes(StandardCharsets.UTF_8)).skipBytes(2);
        ByteBuf direct = Unpooled.directBuffer().writeBytes(body);
        try {
            assertThat(IngressJson.readRequest(sliced).toString()).isEqualTo("{\"model\":\"m\",\"n\":[1,2]}");
            assertThat(IngressJson.readRequest(direct).toString()).isEqualTo("{\"model\":\"m\",\"n\":[1,2]}");
            assertThat(sliced.readerIndex()).isEqualTo(2);
            assertThat(direct.readerIndex()).isZero();
        } finally {
            sliced.release();
            direct.release();
        }
    }
}
