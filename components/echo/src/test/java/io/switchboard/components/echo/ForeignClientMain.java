package io.switchboard.components.echo;

import io.switchboard.metastub.CallRecord;
import io.switchboard.client.Switchboard;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A client in a JVM of its own (started by {@link InProcessEndToEndTest}): looks Echo up in the
 * registry given as the argument, makes one small and one large call, and prints the protocol of
 * each, whether every value came back, and the protocols of the server, the client and both.
 */
public final class ForeignClientMain {
    private ForeignClientMain() {
    }

    public static void main(String[] args) {
        List<CallRecord> records = new CopyOnWriteArrayList<>();
        try (Switchboard sb = Switchboard.builder(args[0]).listener(records::add).connect()) {
            EchoStub echo = sb.lookup(EchoComponent.DESCRIPTOR, EchoComponent::stub);
            echo.empty();
            double[] values = new double[50_000];
            for (int i = 0; i < values.length; i++) {
                values[i] = i - 0.5;
            }
            boolean exact = java.util.Arrays.equals(values, echo.echoDoubles(values));
            System.out.println("protocols: " + String.join(",", records.stream().map(CallRecord::protocol).toList()));
            System.out.println("exact: " + exact);
            var suite = sb.channel("Echo", EchoComponent.DESCRIPTOR).suite();
            System.out.println("server: " + String.join(",", suite.serverEndpoints().stream().map(e -> e.protocol()).toList()));
            System.out.println("client: " + String.join(",", suite.clientProtocols()));
            System.out.println("candidates: " + String.join(",", suite.candidates()));
        }
    }
}
