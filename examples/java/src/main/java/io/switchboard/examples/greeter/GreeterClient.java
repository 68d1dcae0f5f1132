package io.switchboard.examples.greeter;

import io.switchboard.client.Switchboard;

/**
 * Calls Greeter knowing only the registry's address: the stub finds the component's endpoints there
 * and chooses each call's protocol.
 *
 * <pre>{@code
 * java -cp "target/greeter-1.0-SNAPSHOT.jar:$(cat target/classpath.txt)" \
 *     io.switchboard.examples.greeter.GreeterClient http://127.0.0.1:8081/axis2/services/Registry Ada
 * }</pre>
 */
public final class GreeterClient {
    private GreeterClient() {
    }

    public static void main(String[] args) {
        if (args.length < 1) {
            System.err.println("usage: GreeterClient REGISTRY_URL [NAME]");
            System.exit(2);
        }
        System.out.println(greet(args[0], args.length > 1 ? args[1] : "world"));
    }

    /** Looks Greeter up in the registry at {@code registryUrl} and greets {@code name}. */
    static String greet(String registryUrl, String name) {
        try (Switchboard sb = Switchboard.connect(registryUrl)) {
            GreeterStub greeter = sb.lookup(GreeterComponent.DESCRIPTOR, GreeterComponent::stub);
            return greeter.greet(name);
        }
    }
}
