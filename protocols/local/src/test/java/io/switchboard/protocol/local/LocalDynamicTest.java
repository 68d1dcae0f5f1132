package io.switchboard.protocol.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.dynamic.DynamicFault;
import io.switchboard.codec.dynamic.DynamicInterface;
import io.switchboard.codec.dynamic.DynamicRecord;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.protocol.WireBytes;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.EchoDoubles;
import io.switchboard.testing.conformance.Values;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The in-process protocol with a caller that has no generated code: its records are copied into
 * the component's beans and back through the two protobuf codecs (model-driven and generated),
 * and the bytes it reports are those of the copied encodings (0 for an operation that shares its objects).
 */
class LocalDynamicTest {
    private final ProtocolServer server = Protocols.get("local").newServer(ServerSettings.defaults());
    private final ProtocolClient client = Protocols.get("local").newClient(ClientSettings.defaults());
    private final ConformanceImpl impl = new ConformanceImpl();
    private final Endpoint endpoint = server.export(ConformanceComponent.skeleton(impl));
    private final DynamicInterface dynamic = DynamicInterface.fromSchema(ConformanceComponent.DESCRIPTOR.schema());
    private final Transport transport = client.connect(dynamic.descriptor(), endpoint);

    @AfterEach
    void close() {
        transport.close();
        client.close();
        server.close();
    }

    @Test
    void dynamicCallsCopyThroughTheCodecsAndCountTheCopiedBytes() throws Exception {
        WireBytes wire = new WireBytes();
        CallOptions options = CallOptions.DEFAULT.withWireBytes(wire);
        double[] values = Values.EDGE_DOUBLES.clone();
        DynamicRecord echoed = call("echoDoubles", dynamic.request("echoDoubles").set("values", values), options);
        Values.assertSameDoubles(values, (double[]) echoed.get("values"));
        EchoDoubles bean = new EchoDoubles();
        bean.setValues(values);
        long encoded = ConformanceComponent.DESCRIPTOR.codec(ProtoCodec.class).toBytes("echoDoubles", bean, 10).length;
        assertEquals(encoded, wire.sent());
        assertEquals(encoded, wire.received(), "the response is the same array, copied once more");

        DynamicRecord a = dynamic.type("LinkEntry").newRecord().set("llong", 1L).set("sshort", (short) 1).set("iint", 1)
                .set("ffloat", 1f).set("ddouble", -0.0);
        a.set("nextLink", a);
        DynamicRecord back = (DynamicRecord) call("echoList", dynamic.request("echoList").set("head", a), options).get("head");
        assertSame(back, back.get("nextLink"));

        DynamicRecord divide = dynamic.request("divide").set("dividend", 1L).set("divisor", 0L);
        DynamicFault f = assertThrows(DynamicFault.class, () -> call("divide", divide, options));
        assertEquals(1L, f.faultInfo().get("dividend"));
    }

    private DynamicRecord call(String operation, DynamicRecord request, CallOptions options) throws Exception {
        return (DynamicRecord) transport.call(dynamic.descriptor().operation(operation), request, options);
    }
}
