package io.switchboard.metastub;

import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * The servers of {@link SoakTest} across hosts: the conformance component on tcp, gRPC and SOAP,
 * bound to the address {@code args[0]}, with mutual TLS when {@code args[1]} is {@code tls}. Prints "endpoints PROTOCOL=ADDRESS ..." and answers the
 * line "counts" on standard input with "counts RAN INCREMENTS SHED": the operations its servers ran,
 * how many of them were {@code increment}, and the connections they shed at their limits; and the
 * line "weigh" with "weigh HEAP THREADS
 * DESCRIPTORS": its heap after a full GC (the least of three readings), live threads and open file
 * descriptors, the servers' side of what the soak weighs in its clients. Ends when its standard
 * input ends.
 */
public final class SoakServerMain {
    private SoakServerMain() {
    }

    public static void main(String[] args) throws Exception {
        ConformanceImpl impl = new ConformanceImpl();
        Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
        List<ProtocolServer> servers = new ArrayList<>();
        List<Endpoint> endpoints = SoakTest.serve(ServerSettings.defaults().withBindAddress(args[0]),
                args.length > 1 && args[1].equals("tls"), impl, served, servers);
        // Endpoint prints as PROTOCOL=ADDRESS
        System.out.println("endpoints " + endpoints.stream().map(Endpoint::toString).collect(Collectors.joining(" ")));
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String command = in.readLine(); command != null; command = in.readLine()) {
            if (command.equals("counts")) {
                System.out.println("counts " + SoakTest.ran(served) + " " + impl.increments.get() + " "
                        + SoakTest.shed(servers));
                System.out.flush();
            } else if (command.equals("weigh")) {
                System.out.println("weigh " + SoakTest.heapAfterGc() + " " + ManagementFactory.getThreadMXBean().getThreadCount() + " "
                        + SoakTest.openDescriptors());
                System.out.flush();
            }
        }
        for (ProtocolServer server : servers) {
            server.close();
        }
    }
}
