package io.switchboard.protocol.local;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.RemoteInvocationException;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.protocol.TransportException;
import io.switchboard.testing.conformance.Conformance;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.LinkEntry;
import io.switchboard.testing.conformance.Record;
import io.switchboard.testing.conformance.Tensor;
import io.switchboard.testing.conformance.Values;
import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What the local protocol promises beyond the conformance suite: copies, sharing, and its JVM id. */
class LocalProtocolTest {
    /** A component that changes what it is given and keeps what it returns: copies must hide both. */
    static final class Meddler extends ConformanceImpl {
        final List<Object> kept = new ArrayList<>();

        @Override
        public double[] echoDoubles(double[] values) {
            double[] answer = values.clone();
            Arrays.sort(values);          // in place, on what the caller passed
            values[0] = 42;
            kept.add(answer);
            return answer;
        }

        @Override
        public LinkEntry echoList(LinkEntry head) {
            head.setSstring("changed by the component");
            kept.add(head);
            return head;
        }

        @Override
        public Record echoShared(Record record) {
            kept.add(record);
            return record;
        }
    }

    private final ProtocolServer server = Protocols.get("local").newServer(ServerSettings.defaults());
    private final ProtocolClient client = Protocols.get("local").newClient(ClientSettings.defaults());
    private final Meddler impl = new Meddler();
    private final Endpoint endpoint = server.export(ConformanceComponent.skeleton(impl));
    private final Transport transport = client.connect(ConformanceComponent.DESCRIPTOR, endpoint);
    private final Conformance stub = ConformanceComponent.stub(transport);

    @AfterEach
    void close() {
        transport.close();
        client.close();
        server.close();
    }

    @Test
    void theComponentWorksOnACopyAndTheCallerGetsACopy() {
        double[] mine = {3, 1, 2};
        double[] back = stub.echoDoubles(mine);
        assertArrayEquals(new double[] {3, 1, 2}, mine, "the component sorted its own copy, not the caller's array");
        assertArrayEquals(new double[] {3, 1, 2}, back);
        back[0] = -1;
        assertEquals(3, ((double[]) impl.kept.get(0))[0], "the caller changed its copy, not the component's");

        LinkEntry head = Values.list(3);
        LinkEntry listBack = stub.echoList(head);
        assertEquals("node 1 \uD83D\uDE00", head.getNextLink().getSstring());
        assertTrue(head.getSstring() == null, "the caller's node is untouched");
        assertEquals("changed by the component", listBack.getSstring());
        assertNotSame(impl.kept.get(1), listBack);
    }

    @Test
    void aByReferenceOperationSharesTheObjects() {
        Record r = Values.fullRecord();
        Record back = stub.echoShared(r);
        assertSame(r, back, "byReference: no copy either way");
        assertSame(r, impl.kept.get(0));
        Record copied = stub.echoRecord(r);
        assertNotSame(r, copied, "operations without the mark are copied");
        Values.assertSameRecord(r, copied);
    }

    @Test
    void endpointNamesThisJvmAndIsRecognised() {
        assertTrue(endpoint.address().startsWith("local://" + LocalProtocolProvider.jvmId() + "/"), endpoint.address());
        assertTrue(endpoint.address().endsWith("/Conformance"), endpoint.address());
        assertTrue(LocalProtocolProvider.isLocal(endpoint));
        assertTrue(LocalProtocolProvider.isExported(endpoint));
        assertFalse(LocalProtocolProvider.isLocal(new Endpoint("grpc", "grpc://127.0.0.1:1/Conformance")));
        server.unexport("Conformance");
        assertTrue(LocalProtocolProvider.isLocal(endpoint));
        assertFalse(LocalProtocolProvider.isExported(endpoint));
        TransportException e = assertThrows(TransportException.class, stub::ping);
        assertEquals(TransportException.Delivery.NOT_DELIVERED, e.delivery());
    }

    @Test
    void anotherJvmsEndpointFailsFastAsNotDelivered() {
        String path = endpoint.uri().getPath();
        Endpoint elsewhere = new Endpoint("local", "local://" + UUID.randomUUID() + path);
        assertFalse(LocalProtocolProvider.isLocal(elsewhere));
        try (Transport t = client.connect(ConformanceComponent.DESCRIPTOR, elsewhere)) {
            long before = impl.increments.get();
            TransportException e = assertThrows(TransportException.class, () -> ConformanceComponent.stub(t).increment(1));
            assertEquals(TransportException.Delivery.NOT_DELIVERED, e.delivery(), e.getMessage());
            assertTrue(e.getMessage().contains("another JVM"), e.getMessage());
            assertEquals(before, impl.increments.get(), "nothing ran");
        }
    }

    @Test
    void eachClassLoaderHasItsOwnId() throws Exception {
        List<URL> urls = new ArrayList<>();
        for (String p : System.getProperty("java.class.path").split(File.pathSeparator)) {
            urls.add(Path.of(p).toUri().toURL());
        }
        try (URLClassLoader other = new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
            Class<?> provider = other.loadClass(LocalProtocolProvider.class.getName());
            assertNotSame(LocalProtocolProvider.class, provider);
            String otherId = (String) provider.getMethod("jvmId").invoke(null);
            assertFalse(otherId.equals(LocalProtocolProvider.jvmId()), "a second class loader is another 'JVM'");
        }
    }

    @Test
    void undeclaredErrorsKeepTheirCause() {
        RemoteInvocationException e = assertThrows(RemoteInvocationException.class, () -> stub.fail("boom"));
        assertEquals(IllegalStateException.class.getName(), e.remoteType());
        assertInstanceOf(IllegalStateException.class, e.getCause());
    }

    @Test
    void anInconsistentArrayNeverReachesTheComponent() {
        Tensor bad = new Tensor();
        bad.setShape(new int[] {3});
        bad.setValues(new double[2]);
        io.switchboard.protocol.RefusedException e = assertThrows(io.switchboard.protocol.RefusedException.class,
                () -> stub.echoTensor(bad));
        assertEquals("malformed", e.reason());
    }
}
