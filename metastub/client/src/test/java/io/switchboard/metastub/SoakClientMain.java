package io.switchboard.metastub;

import io.switchboard.protocol.Endpoint;
import java.util.ArrayList;
import java.util.List;

/**
 * The clients of {@link SoakTest} across hosts: the soak's phases against the endpoints
 * {@code PROTOCOL=ADDRESS} of the arguments, with every assertion of the clients' side. Prints the
 * report, then "soaked COMPLETED INCREMENTS", and exits with 0; a failed assertion or call exits
 * with 1, its stack trace on standard error.
 */
public final class SoakClientMain {
    private SoakClientMain() {
    }

    public static void main(String[] args) {
        try {
            List<Endpoint> endpoints = new ArrayList<>();
            for (String arg : args) {
                String[] parts = arg.split("=", 2);
                endpoints.add(new Endpoint(parts[0], parts[1]));
            }
            SoakTest.Soaked soaked = new SoakTest().soak(endpoints);
            System.out.println("soaked " + soaked.completed() + " " + soaked.increments());
            System.out.flush();
            System.exit(0);
        } catch (Throwable e) {
            e.printStackTrace();
            System.out.println("failed: " + e);
            System.out.flush();
            System.exit(1);
        }
    }
}
