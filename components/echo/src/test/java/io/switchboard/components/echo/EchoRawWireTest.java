package io.switchboard.components.echo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.switchboard.codec.proto.ProtoSchemas;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoOutput;
import io.switchboard.idl.SecureXml;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.testing.RunningRegistry;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * What a hand-built or other-language client sends, straight to the echo component served as a
 * user serves it (a component server bound in a registry): SOAP envelopes over HTTP and the typed
 * protobuf messages over gRPC, each with one thing wrong that the readers used to take silently. Each is
 * refused naming the field: a SOAP Fault whose {@code sb:refused} detail says {@code malformed}
 * and the element's path, or gRPC {@code INVALID_ARGUMENT} with the field in {@code sb-refused-field};
 * the operation never runs, and a good call succeeds right after.
 */
class EchoRawWireTest {
    private static final String NS = "urn:switchboard:echo";
    private static final OperationDescriptor ECHO_LIST = EchoComponent.DESCRIPTOR.operation("echoList");
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static final Metadata.Key<String> REFUSED = Metadata.Key.of("sb-refused", Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> REFUSED_FIELD =
            Metadata.Key.of("sb-refused-field", Metadata.ASCII_STRING_MARSHALLER);

    private static RunningRegistry registry;
    private static EchoService impl;
    private static String soapUrl;
    private static ManagedChannel grpc;

    @BeforeAll
    static void start() {
        registry = RunningRegistry.start();
        impl = new EchoService();
        ComponentEntry entry = registry.serve(EchoComponent.skeleton(impl));
        for (Endpoint e : entry.endpoints()) {
            if (e.protocol().equals("soap")) {
                soapUrl = e.address();
            } else if (e.protocol().equals("grpc")) {
                grpc = NettyChannelBuilder.forAddress(e.uri().getHost(), e.uri().getPort()).usePlaintext().build();
            }
        }
        assertNotNull(soapUrl, "a SOAP endpoint in " + entry);
        assertNotNull(grpc, "a gRPC endpoint in " + entry);
    }

    @AfterAll
    static void stop() {
        if (grpc != null) {
            grpc.shutdownNow();
        }
        registry.close();
    }

    // ---- SOAP

    /** One LinkEntry node with these field elements, as the head of an echoList request. */
    private static String echoList(String nodeAttributes, String fields) {
        return "<?xml version='1.0' encoding='UTF-8'?>"
                + "<soapenv:Envelope xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\"><soapenv:Body>"
                + "<e:echoList xmlns:e=\"" + NS + "\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">"
                + "<e:head>n0</e:head><e:sb-graph><e:LinkEntry sb-id=\"n0\"" + nodeAttributes + ">" + fields
                + "</e:LinkEntry></e:sb-graph></e:echoList></soapenv:Body></soapenv:Envelope>";
    }

    private static String fields(String llong, String sshort, String iint, String sstring) {
        return "<e:llong>" + llong + "</e:llong><e:sshort>" + sshort + "</e:sshort><e:iint>" + iint + "</e:iint>"
                + "<e:ffloat>1.5</e:ffloat><e:ddouble>-0.0</e:ddouble>"
                + (sstring == null ? "" : "<e:sstring>" + sstring + "</e:sstring>");
    }

    @Test
    void anIntOutOfRangeIsRefusedNamingIt() throws Exception {
        assertSoapRefused(post(echoList("", fields("1", "2", "2147483648", null))),
                "echoList/sb-graph/LinkEntry[1]/iint", "outside the range of xs:int");
    }

    @Test
    void aShortOutOfRangeIsRefusedNamingIt() throws Exception {
        assertSoapRefused(post(echoList("", fields("1", "40000", "3", null))),
                "echoList/sb-graph/LinkEntry[1]/sshort", "outside the range of xs:short");
    }

    @Test
    void aLinkEntryWithoutItsRequiredFieldsIsRefusedNamingTheFirst() throws Exception {
        assertSoapRefused(post(echoList("", "")), "echoList/sb-graph/LinkEntry[1]/llong",
                "required field llong (xs:long) of LinkEntry is missing");
        assertSoapRefused(post(echoList("", "<e:llong>1</e:llong><e:iint>3</e:iint>")),
                "echoList/sb-graph/LinkEntry[1]/sshort", "is missing (before iint)");
    }

    @Test
    void nilOnAStructWithRequiredFieldsIsRefused() throws Exception {
        assertSoapRefused(post(echoList(" xsi:nil=\"true\"", "")), "echoList/sb-graph/LinkEntry[1]",
                "xsi:nil on an element that is not nillable");
        String nilHead = echoList("", fields("1", "2", "3", null)).replace("<e:head>n0</e:head>",
                "<e:head xsi:nil=\"true\"/>");
        assertSoapRefused(post(nilHead), "echoList/head", "xsi:nil on an element that is not nillable");
    }

    @Test
    void loneSurrogatesAreRefusedAsACharacterReferenceAndAsBytes() throws Exception {
        assertSoapRefused(post(echoList("", fields("1", "2", "3", "a&#xD800;b"))),
                "echoList/sb-graph/LinkEntry[1]/sstring", "not well-formed XML");
        // U+D800 encoded as UTF-8 (ED A0 80), which is not UTF-8: a client that encodes strings naively sends it
        byte[] body = echoList("", fields("1", "2", "3", "a\u0800b")).getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < body.length - 2; i++) {
            if ((body[i] & 0xFF) == 0xE0 && (body[i + 1] & 0xFF) == 0xA0 && (body[i + 2] & 0xFF) == 0x80) {
                body[i] = (byte) 0xED;
            }
        }
        // the bytes are decoded ahead of the parse, before any element is read: the refusal gives
        // the byte's offset in the request instead of the field's path
        HttpResponse<String> r = post(body);
        assertSoapRefused(r, null, "Invalid UTF-8 character 0xd800(a surrogate character)");
        assertTrue(r.body().contains("byte #"), r.body());
    }

    @Test
    void wrongTypedUnknownAndRepeatedElementsAreRefused() throws Exception {
        assertSoapRefused(post(echoList("", fields("1", "2", "three", null))), "echoList/sb-graph/LinkEntry[1]/iint",
                "'three' is not an xs:int");
        assertSoapRefused(post(echoList("", fields("1", "2", "3", null) + "<e:colour>red</e:colour>")),
                "echoList/sb-graph/LinkEntry[1]/colour", "unexpected element");
        assertSoapRefused(post(echoList("", fields("1", "2", "3", null).replace("<e:iint>3</e:iint>",
                "<e:iint>3</e:iint><e:iint>4</e:iint>"))), "echoList/sb-graph/LinkEntry[1]/iint", "appears twice");
    }

    @Test
    void aGoodRawCallSucceedsAfterEachRefusal() throws Exception {
        long before = impl.calls();
        for (String bad : new String[] {fields("1", "2", "2147483648", null), fields("1", "40000", "3", null), ""}) {
            assertSoapRefused(post(echoList("", bad)), null, "");
            HttpResponse<String> good = post(echoList("", fields("-9223372036854775808", "-32768", "2147483647", "ok")));
            assertEquals(200, good.statusCode(), good.body());
            assertTrue(good.body().contains(">-9223372036854775808<") && good.body().contains(">-32768<")
                    && good.body().contains(">2147483647<"), "the extremes of each range come back: " + good.body());
        }
        assertEquals(before + 3, impl.calls(), "the component ran the good calls only");
    }

    private static HttpResponse<String> post(String envelope) throws Exception {
        return post(envelope.getBytes(StandardCharsets.UTF_8));
    }

    private static HttpResponse<String> post(byte[] envelope) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(soapUrl)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "text/xml; charset=UTF-8")
                .header("SOAPAction", "\"" + ECHO_LIST.soapAction() + "\"")
                .POST(HttpRequest.BodyPublishers.ofByteArray(envelope)).build();
        return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /**
     * A Client fault whose detail is {@code <sb:refused reason="malformed" field="PATH"/>} and whose
     * text says {@code problem}; a null path accepts any.
     */
    private static Element assertSoapRefused(HttpResponse<String> r, String path, String problem) throws Exception {
        assertEquals(500, r.statusCode(), "a SOAP 1.1 fault comes with 500 (WS-I BP R1126): " + r.body());
        Document fault = SecureXml.documentBuilder().parse(new ByteArrayInputStream(r.body().getBytes(StandardCharsets.UTF_8)));
        NodeList codes = fault.getElementsByTagName("faultcode");
        assertEquals(1, codes.getLength(), r.body());
        assertTrue(codes.item(0).getTextContent().endsWith("Client"), "a Client fault: " + r.body());
        NodeList refused = fault.getElementsByTagNameNS("urn:switchboard:soap", "refused");
        assertEquals(1, refused.getLength(), "an sb:refused detail: " + r.body());
        Element detail = (Element) refused.item(0);
        assertEquals("malformed", detail.getAttribute("reason"), r.body());
        if (path != null) {
            assertEquals(path, detail.getAttribute("field"), r.body());
        }
        assertTrue(fault.getElementsByTagName("faultstring").item(0).getTextContent().contains(problem),
                "the fault says '" + problem + "': " + r.body());
        return detail;
    }

    // ---- gRPC: the typed protobuf messages of Echo.proto, written by hand as a client in another
    // language would; its cases are a number out of its schema type, a string that is not UTF-8, a
    // field of the wrong wire type and a reference past the node table

    @Test
    void aShortOutOfItsRangeIsRefusedNamingIt() throws Exception {
        // echoList { head = 1; sb_nodes { sshort (2) = 40000 } }
        ProtoOutput node = new ProtoOutput(16);
        node.writeInt32(2, 40_000);
        assertGrpcRefused(call(list(node)), "LinkEntry[node 0].sshort", "40000 is out of the range of a short");
    }

    @Test
    void aLoneSurrogateInAStringIsRefusedNamingIt() throws Exception {
        byte[] bytes = oneNode("a\u0800b");   // U+0800 is E0 A0 80 in UTF-8; ED A0 80 would be U+D800
        int at = indexOf(bytes, new byte[] {(byte) 0xE0, (byte) 0xA0, (byte) 0x80});
        bytes[at] = (byte) 0xED;
        assertGrpcRefused(call(bytes), "LinkEntry.sstring", "not UTF-8");
    }

    @Test
    void aFieldOfTheWrongWireTypeIsRefusedNamingIt() throws Exception {
        // sshort (2) as a double (wire type 1) instead of a varint
        ProtoOutput node = new ProtoOutput(16);
        node.writeDouble(2, 1.0);
        assertGrpcRefused(call(list(node)), "LinkEntry[node 0].sshort", "wire type 1");
    }

    @Test
    void aReferencePastTheNodeTableIsRefusedNamingIt() throws Exception {
        byte[] bytes = oneNode("ok");
        assertEquals(0x08, bytes[0], "head: field 1, a varint");
        bytes[1] = 5;
        assertGrpcRefused(call(bytes), "echoList.head", "node number 5 is not in the node table of 1 nodes");
    }

    @Test
    void aGoodProtobufCallSucceedsAfterARefusal() throws Exception {
        byte[] bad = oneNode("ok");
        bad[1] = 5;
        long before = impl.calls();
        assertEquals(Status.Code.INVALID_ARGUMENT, call(bad).status().getCode());
        Result good = call(oneNode("ok"));
        assertEquals(Status.Code.OK, good.status().getCode(), String.valueOf(good.status()));
        assertEquals(before + 1, impl.calls(), "the component ran the good call only");
    }

    /** An echoList request with one LinkEntry node, as the generated protobuf codec writes it. */
    private static byte[] oneNode(String text) {
        LinkEntry e = new LinkEntry();
        e.setLlong(1);
        e.setSshort((short) 2);
        e.setIint(3);
        e.setFfloat(4);
        e.setDdouble(5);
        e.setSstring(text);
        EchoList m = new EchoList();
        m.setHead(e);
        return EchoComponent.DESCRIPTOR.codec(ProtoCodec.class).toBytes("echoList", m, 10);
    }

    /** echoList { head = 1; sb_nodes = 2046 { the node's fields } }. */
    private static byte[] list(ProtoOutput node) {
        ProtoOutput m = new ProtoOutput(64);
        m.writeUInt32(1, 1);
        m.writeBytes(2046, node.toByteArray(), 0, node.size());
        return m.toByteArray();
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i <= haystack.length - needle.length; i++) {
            for (int k = 0; k < needle.length; k++) {
                if (haystack[i + k] != needle[k]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("not found");
    }

    private record Result(Status status, Metadata trailers) {
    }

    private static void assertGrpcRefused(Result r, String field, String problem) {
        assertEquals(Status.Code.INVALID_ARGUMENT, r.status().getCode(), String.valueOf(r.status()));
        assertEquals("malformed", r.trailers().get(REFUSED));
        assertEquals(field, r.trailers().get(REFUSED_FIELD), String.valueOf(r.status()));
        assertTrue(r.status().getDescription().contains(problem), r.status().getDescription());
    }

    /** One request as one message on the operation's (streaming) method, the bytes as given. */
    private static Result call(byte[] message) throws Exception {
        MethodDescriptor<byte[], byte[]> method = MethodDescriptor.<byte[], byte[]>newBuilder()
                .setType(MethodDescriptor.MethodType.BIDI_STREAMING)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(
                        ProtoSchemas.serviceName(EchoComponent.DESCRIPTOR.name()), ECHO_LIST.name()))
                .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
        CompletableFuture<Result> done = new CompletableFuture<>();
        ClientCall<byte[], byte[]> call = grpc.newCall(method, io.grpc.CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS));
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onClose(Status status, Metadata trailers) {
                done.complete(new Result(status, trailers));
            }
        }, new Metadata());
        call.request(Integer.MAX_VALUE);
        call.sendMessage(message);
        call.halfClose();
        return done.get(30, TimeUnit.SECONDS);
    }

    private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    };
}
