package io.switchboard.protocol.soap;

import io.switchboard.protocol.spi.ProtocolProvider;

/**
 * The conformance suite once more on a server with every shortcut through Jetty's and Axis2's
 * insides off (docs/architecture.md, "Library internals we rely on"): the public paths must answer
 * every call as the shortcuts do.
 */
class SoapConformanceShortcutsOffTest extends SoapConformanceTest {
    @Override
    protected ProtocolProvider provider() {
        return new SoapProtocolProvider(LibraryInternals.OFF);
    }
}
