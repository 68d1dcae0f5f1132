package io.switchboard.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.TransportException;
import io.switchboard.testing.UnusedPorts;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** What a failed lookup leaves behind. */
class SwitchboardLookupTest {
    @Test
    void aLookupThatFailsLeavesNoChannelFollowingTheRegistry() throws Exception {
        int port = UnusedPorts.port();   // nothing listens there
        ClientSettings quick = new ClientSettings(Duration.ofMillis(200), Duration.ofSeconds(2),
                ClientSettings.defaults().maxMessageBytes(), ClientSettings.defaults().maxGraphNodes());
        try (Switchboard sb = Switchboard.builder("http://127.0.0.1:" + port + "/axis2/services/Registry")
                .settings(quick).connect()) {
            for (int i = 0; i < 3; i++) {
                assertThrows(TransportException.class,
                        () -> sb.lookup(ConformanceComponent.DESCRIPTOR, ConformanceComponent::stub));
            }
            assertEquals(0, sb.followed(), "each failed lookup left its channel among those following the registry");
        }
    }
}
