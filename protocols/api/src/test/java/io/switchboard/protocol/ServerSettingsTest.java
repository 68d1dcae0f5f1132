package io.switchboard.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.NetworkInterface;
import org.junit.jupiter.api.Test;

class ServerSettingsTest {
    @Test
    void aWildcardBindPublishesAnAddressOfAnInterfaceThatIsUpAndNotLoopback() throws Exception {
        String published = ServerSettings.defaults().withBindAddress("0.0.0.0").hostForEndpoints();
        InetAddress address = InetAddress.getByName(published);
        if (address.isLoopbackAddress()) {
            // only when the host has no other interface up: then there is nothing else to publish
            assertTrue(NetworkInterface.networkInterfaces().filter(n -> {
                try {
                    return n.isUp() && !n.isLoopback() && n.inetAddresses().anyMatch(a -> !a.isLinkLocalAddress());
                } catch (java.net.SocketException e) {
                    return false;
                }
            }).findAny().isEmpty(), "published " + published + " though another interface is up");
        } else {
            NetworkInterface nic = NetworkInterface.getByInetAddress(address);
            assertTrue(nic != null && nic.isUp() && !nic.isLoopback(), published);
        }
        assertFalse(ServerSettings.isWildcard(published));
    }

    @Test
    void anAdvertisedHostWinsAndAConcreteBindIsPublishedAsItIs() {
        assertEquals("node7.example", ServerSettings.defaults().withBindAddress("0.0.0.0")
                .withAdvertisedHost("node7.example").hostForEndpoints());
        assertEquals("127.0.0.1", ServerSettings.defaults().hostForEndpoints());
        assertEquals("10.1.2.3", ServerSettings.defaults().withBindAddress("10.1.2.3").hostForEndpoints());
    }
}
