package io.switchboard.metastub;

import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.testing.CountingSkeleton;
import io.switchboard.testing.TestCertificates;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The servers of {@link SoakTest} across hosts: the conformance component on tcp, gRPC and SOAP,
 * bound to the address {@code args[0]}, with mutual TLS when {@code args[1]} is {@code tls}. Prints "endpoints PROTOCOL=ADDRESS ..." and answers the
 * line "counts" on standard input with "counts RAN INCREMENTS": the operations its servers ran, and
 * how many of them were {@code increment}. Ends when its standard input ends.
 */
public final class SoakServerMain {
    private SoakServerMain() {
    }

    public static void main(String[] args) throws Exception {
        ConformanceImpl impl = new ConformanceImpl();
        Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
        Skeleton skeleton = ConformanceComponent.skeleton(impl);
        List<ProtocolServer> servers = new ArrayList<>();
        StringBuilder line = new StringBuilder("endpoints");
        for (String protocol : SoakTest.PROTOCOLS) {
            ServerSettings settings = ServerSettings.defaults().withBindAddress(args[0]);
            ProtocolServer server = Protocols.get(protocol).newServer(args.length > 1 && args[1].equals("tls")
                    ? settings.withTls(TestCertificates.get().serverMutual()) : settings);
            servers.add(server);
            Endpoint endpoint = server.export(new CountingSkeleton(skeleton, protocol, served, p -> { }));
            line.append(' ').append(endpoint.protocol()).append('=').append(endpoint.address());
        }
        System.out.println(line);
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String command = in.readLine(); command != null; command = in.readLine()) {
            if (command.equals("counts")) {
                long ran = served.values().stream().mapToLong(AtomicInteger::get).sum();
                System.out.println("counts " + ran + " " + impl.increments.get());
                System.out.flush();
            }
        }
        for (ProtocolServer server : servers) {
            server.close();
        }
    }
}
