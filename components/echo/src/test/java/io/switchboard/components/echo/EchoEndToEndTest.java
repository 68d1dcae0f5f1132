package io.switchboard.components.echo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.switchboard.registry.testing.RunningRegistry;
import io.switchboard.client.Switchboard;
import java.util.IdentityHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The echo component as a user runs it: bound in a registry, looked up by a client that knows
 * only the registry's address, called through the generated stub.
 */
class EchoEndToEndTest {
    private static RunningRegistry registry;
    private static Echo echo;
    private static EchoService impl;

    @BeforeAll
    static void start() {
        registry = RunningRegistry.start();
        impl = new EchoService();
        registry.serve(EchoComponent.skeleton(impl));
        // over the network: in this JVM the meta-stub would otherwise prefer the in-process protocol
        // (InProcessEndToEndTest covers that)
        Switchboard client = registry.connect(b -> b.protocols("grpc", "soap"));
        echo = client.lookup(EchoComponent.DESCRIPTOR, EchoComponent::stub);
    }

    @AfterAll
    static void stop() {
        registry.close();
    }

    @Test
    void emptyCallRuns() {
        long before = impl.calls();
        echo.empty();
        assertEquals(before + 1, impl.calls());
    }

    @Test
    void doublesComeBackBitForBit() {
        double[] v = {Double.NaN, -0.0, 0.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.MIN_VALUE,
            Double.MAX_VALUE, Double.MIN_NORMAL, 1e-310, 0.1};
        double[] back = echo.echoDoubles(v);
        assertEquals(v.length, back.length);
        for (int i = 0; i < v.length; i++) {
            assertEquals(Double.doubleToLongBits(v[i]), Double.doubleToLongBits(back[i]), "index " + i);
        }
        assertEquals(0, echo.echoDoubles(new double[0]).length);
        assertNull(echo.echoDoubles(null));
    }

    @Test
    void hundredThousandNodeListWithNullAndSupplementaryStrings() {
        int n = 100_000;
        LinkEntry head = null;
        for (int i = n - 1; i >= 0; i--) {
            LinkEntry e = new LinkEntry();
            e.setLlong(Long.MIN_VALUE + i);
            e.setSshort((short) -i);
            e.setIint(i);
            e.setFfloat(i == 0 ? Float.NaN : -i);
            e.setDdouble(i == 1 ? -0.0 : Math.sqrt(i));
            e.setSstring(i % 2 == 0 ? null : "\uD835\uDD4A" + i);
            e.setNextLink(head);
            head = e;
        }
        LinkEntry back = echo.echoList(head);
        int count = 0;
        IdentityHashMap<LinkEntry, Boolean> seen = new IdentityHashMap<>();
        for (LinkEntry a = head, b = back; a != null; a = a.getNextLink(), b = b.getNextLink(), count++) {
            assertNotNull(b, "node " + count);
            assertNull(seen.put(b, true), "every node is new");
            assertEquals(a.getLlong(), b.getLlong());
            assertEquals(a.getSshort(), b.getSshort());
            assertEquals(a.getIint(), b.getIint());
            assertEquals(Float.floatToIntBits(a.getFfloat()), Float.floatToIntBits(b.getFfloat()));
            assertEquals(Double.doubleToLongBits(a.getDdouble()), Double.doubleToLongBits(b.getDdouble()));
            assertEquals(a.getSstring(), b.getSstring());
        }
        assertEquals(n, count);
    }

    @Test
    void sharedNodeStaysShared() {
        LinkEntry shared = new LinkEntry();
        shared.setSstring("shared");
        LinkEntry head = new LinkEntry();
        head.setNextLink(shared);
        shared.setNextLink(shared);
        LinkEntry back = echo.echoList(head);
        assertSame(back.getNextLink(), back.getNextLink().getNextLink());
    }
}
