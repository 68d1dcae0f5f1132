package io.switchboard.examples;

import io.switchboard.protocol.ServerSettings;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.registry.store.RegistryStore;
import io.switchboard.registry.store.RegistryStores;
import io.switchboard.protocol.TlsSettings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code ./switchboard registry}: a standalone registry that serves until stopped. */
@Command(name = "registry", mixinStandardHelpOptions = true,
        description = "Run a registry over SOAP until stopped (Ctrl-C or SIGTERM).")
final class RegistryCommand implements Callable<Integer> {
    @Option(names = "--port", defaultValue = "" + RegistryServer.DEFAULT_PORT, description = "Port (default ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--bind", defaultValue = "127.0.0.1",
            description = "Address to listen on: 127.0.0.1 (default) or 0.0.0.0 for all.")
    String bind;

    @Option(names = "--advertise", description = "Host name or address the registry's endpoint publishes, for "
            + "clients on other hosts (default: the bind address; with --bind 0.0.0.0, the first non-loopback address).")
    String advertise;

    @Option(names = "--secret-file", description = "File holding the shared secret that writes must carry "
            + "(default: the " + Secrets.ENV + " environment variable; without either, writes are open).")
    Path secretFile;

    @Option(names = "--store", defaultValue = RegistryStores.DEFAULT, description = "Where entries are kept: "
            + "file:PATH (default ${DEFAULT-VALUE}; entries survive a restart), memory, or "
            + "zookeeper://HOST:PORT[,HOST:PORT...]/ROOT (several registries share one view), or a store a jar on "
            + "the class path adds.")
    String store;

    @Option(names = "--tls-keystore", description = "PKCS#12 key store with the registry's key and certificate: "
            + "serve https:// instead of http://. Its password comes from --tls-password-file or the "
            + TLS_PASSWORD_ENV + " environment variable.")
    Path tlsKeyStore;

    @Option(names = "--tls-password-file", description = "File holding the password of --tls-keystore.")
    Path tlsPasswordFile;

    static final String TLS_PASSWORD_ENV = "SWITCHBOARD_TLS_PASSWORD";

    @Override
    public Integer call() throws InterruptedException {
        String secret = Secrets.read(secretFile);
        RegistryServer.Builder builder = RegistryServer.builder().port(port).bindAddress(bind).secret(secret);
        if (advertise != null) {
            builder.advertise(advertise);
        }
        if (tlsKeyStore != null) {
            builder.tls(TlsSettings.keyStore(tlsKeyStore, tlsPassword()));   // a bad key store stops us before the store opens
        }
        RegistryStore entries = RegistryStores.open(store);   // a bad store stops us here, naming the file
        RegistryServer server = builder.store(entries).start();   // closes the store if it cannot start
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "registry-shutdown"));
        System.out.println("registry  " + server.endpoint());
        if (advertise == null && ServerSettings.isWildcard(bind)) {
            System.out.println("address   listening on all interfaces; publishing " + java.net.URI.create(server.endpoint())
                    .getHost() + ", the first non-loopback address (--advertise to choose)");
        }
        System.out.println("wsdl      " + server.wsdlUrl());
        System.out.println("tls       " + (tlsKeyStore == null ? "off (plain http)" : "on, key from " + tlsKeyStore));
        System.out.println("writes    " + (secret == null ? "open (no shared secret set)" : "need the shared secret"));
        System.out.println("store     " + store + " (" + server.store().list().size() + " entries)");
        System.out.flush();
        stopped.await();
        return 0;
    }

    private char[] tlsPassword() {
        if (tlsPasswordFile != null) {
            try {
                return Files.readString(tlsPasswordFile, StandardCharsets.UTF_8).strip().toCharArray();
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read " + tlsPasswordFile + ": " + e.getMessage(), e);
            }
        }
        String env = System.getenv(TLS_PASSWORD_ENV);
        if (env == null) {
            throw new IllegalArgumentException("--tls-keystore needs its password: --tls-password-file FILE or "
                    + TLS_PASSWORD_ENV);
        }
        return env.toCharArray();
    }
}
