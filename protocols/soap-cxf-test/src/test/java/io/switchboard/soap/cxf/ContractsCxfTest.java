package io.switchboard.soap.cxf;

import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.soap.SoapProtocolProvider;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.registry.testing.RunningRegistry;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import org.junit.jupiter.api.Test;

/**
 * The two WSDLs beside the components' that wsdl2java maps at build time, the registry's and the
 * conformance schema's (every construct the interface compiler takes), are the ones their servers
 * serve, so the build's proof holds for what a user fetches.
 */
class ContractsCxfTest {
    @Test
    void theRegistryServesTheWsdlTheClientWasGeneratedFrom() throws Exception {
        try (RunningRegistry registry = RunningRegistry.start()) {
            CxfClients.assertServesTheGeneratedWsdl(registry.url(), "/io/switchboard/registry/wire/Registry.wsdl");
        }
    }

    @Test
    void theConformanceComponentServesTheWsdlTheClientWasGeneratedFrom() throws Exception {
        ProtocolServer server = new SoapProtocolProvider().newServer(ServerSettings.defaults());
        try {
            String address = server.export(ConformanceComponent.skeleton(new ConformanceImpl())).address();
            CxfClients.assertServesTheGeneratedWsdl(address,
                    "/io/switchboard/testing/conformance/Conformance.wsdl");
        } finally {
            server.close();
        }
    }
}
