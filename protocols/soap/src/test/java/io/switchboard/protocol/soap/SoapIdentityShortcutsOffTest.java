package io.switchboard.protocol.soap;

import io.switchboard.protocol.spi.ProtocolProvider;

/**
 * The identity suite on servers with every shortcut off: Axis2's servlet, not the direct path,
 * tells the operation who called (docs/architecture.md, "Library internals we rely on").
 */
class SoapIdentityShortcutsOffTest extends SoapIdentityTest {
    @Override
    protected ProtocolProvider provider() {
        return new SoapProtocolProvider(LibraryInternals.OFF);
    }
}
