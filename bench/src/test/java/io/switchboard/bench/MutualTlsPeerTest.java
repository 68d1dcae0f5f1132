package io.switchboard.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoService;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.Peer.Authentication;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.server.ComponentServer;
import io.switchboard.server.authz.AuthorizationPolicy;
import io.switchboard.testing.TestCertificates;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The security cost rows' wiring, servers and peers in this JVM: each row measures what its name
 * says (mutual TLS; mutual TLS and the 20-rule policy), and refuses to be built on a server that
 * lacks either.
 */
class MutualTlsPeerTest {
    private static final String ECHO_PATH = "/switchboard.echo.Echo/echoDoubles";
    private static TestCertificates certs;
    private static MutualTlsPeer.Identities who;
    private static SecuredEchoServers servers;
    private static final Map<String, List<Endpoint>> endpoints = new HashMap<>();

    @BeforeAll
    static void start() {
        certs = TestCertificates.get();
        who = new MutualTlsPeer.Identities(certs.client(), certs.dnsClient(), certs.clientWithoutKey());
        servers = SecuredEchoServers.start(certs.serverMutual());
        for (String field : servers.readyFields().split(" ")) {
            String[] kv = field.split("=", 2);
            endpoints.put(kv[0], MutualTlsPeer.parse(kv[1]));
        }
    }

    @AfterAll
    static void stop() {
        servers.close();
    }

    @Test
    void bothRowsAnswerOverTlsWithTheirOwnServers() {
        assertEquals(Set.of(MutualTlsPeer.PLAIN, MutualTlsPeer.AUTHZ), endpoints.keySet());
        assertFalse(tcp(MutualTlsPeer.PLAIN).equals(tcp(MutualTlsPeer.AUTHZ)), "two servers: " + endpoints);
        double[] sent = {1.5, -2.25, 3e10};
        for (String row : endpoints.keySet()) {
            assertTrue(tcp(row).startsWith("tcps://"), endpoints.toString());
            try (MutualTlsPeer peer = MutualTlsPeer.connect(row, endpoints.get(row), who)) {
                Payload p = Payload.of(Workload.DOUBLES, 10);
                assertArrayEquals(p.doubles(), (double[]) peer.roundTrip(p), row);
                assertArrayEquals(sent, peer.stub().echoDoubles(sent), row);
            }
        }
    }

    private static String tcp(String row) {
        return endpoints.get(row).stream().filter(e -> e.protocol().equals("tcp")).findFirst().orElseThrow().address();
    }

    @Test
    void thePolicyHasTwentyRulesAndOnlyItsLastAllowRuleLetsTheBenchClientIn() {
        AuthorizationPolicy policy = SecuredEchoServers.policy();
        assertEquals(20, policy.denyRules().size() + policy.allowRules().size(), policy.toString());
        String last = policy.allowRules().get(policy.allowRules().size() - 1).name();
        AuthorizationPolicy.Decision client = policy.evaluate(
                io.switchboard.protocol.Peer.of(TestCertificates.CLIENT_SUBJECT, Authentication.MUTUAL_TLS, "127.0.0.1"), ECHO_PATH);
        assertTrue(client.allowed(), client.reason());
        assertEquals(last, client.rule(), "every rule before the last is walked and does not match");
        AuthorizationPolicy.Decision other = policy.evaluate(
                io.switchboard.protocol.Peer.of(TestCertificates.DNS_CLIENT, Authentication.MUTUAL_TLS, "127.0.0.1"), ECHO_PATH);
        assertFalse(other.allowed(), other.reason());
        AuthorizationPolicy.Decision anonymous = policy.evaluate(io.switchboard.protocol.Peer.anonymous("127.0.0.1"), ECHO_PATH);
        assertFalse(anonymous.allowed(), anonymous.reason());
    }

    @Test
    void aPolicyRowOnAServerWithoutThePolicyIsRefused() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> MutualTlsPeer.connect(MutualTlsPeer.AUTHZ, endpoints.get(MutualTlsPeer.PLAIN), who));
        assertTrue(e.getMessage().contains("an identity the policy does not allow was answered"), e.getMessage());
    }

    @Test
    void thePlainRowOnTheServerWithThePolicyIsRefused() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> MutualTlsPeer.connect(MutualTlsPeer.PLAIN, endpoints.get(MutualTlsPeer.AUTHZ), who));
        assertTrue(e.getMessage().contains("was refused"), e.getMessage());
    }

    @Test
    void aPlainTextEndpointIsRefusedBeforeAnyCall() {
        List<Endpoint> plain = new ArrayList<>(endpoints.get(MutualTlsPeer.PLAIN));
        plain.replaceAll(e -> new Endpoint(e.protocol(), e.address().replace("tcps://", "tcp://")));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> MutualTlsPeer.connect(MutualTlsPeer.PLAIN, plain, who));
        assertTrue(e.getMessage().contains("not tcp over TLS"), e.getMessage());
    }

    @Test
    void aServerThatTakesClientsWithoutCertificatesIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> SecuredEchoServers.start(certs.server()));
        try (ComponentServer oneWay = ComponentServer.builder().protocols("soap", "tcp")
                .settings(ServerSettings.defaults().withTls(certs.server())).build()) {
            List<Endpoint> oneWayEndpoints = oneWay.export(EchoComponent.skeleton(new EchoService())).endpoints();
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> MutualTlsPeer.connect(MutualTlsPeer.PLAIN, oneWayEndpoints, who));
            assertTrue(e.getMessage().contains("without a certificate was answered"), e.getMessage());
        }
    }
}
