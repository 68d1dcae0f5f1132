package io.switchboard.protocol;

import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Collections;
import java.util.function.Function;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * The key and certificate chain of a PKCS#12 key store, read again when the file changes, at the
 * next handshake: a certificate is renewed by replacing the file, with no restart (connections
 * made before keep theirs). A replacement that cannot be read, or holds no key, is refused, said
 * once, and the key before it stays ({@link WatchedFile}). The aliases it hands out name the read
 * they come from, so a handshake that picked its alias before a replacement takes the key and the
 * chain of that same read, never one of each.
 */
final class ReloadingKeyManager extends X509ExtendedKeyManager {
    private final WatchedFile<X509ExtendedKeyManager> keys;

    /** @throws IllegalArgumentException the store cannot be read with {@code password} or holds no key */
    ReloadingKeyManager(java.nio.file.Path pkcs12, char[] password) {
        char[] kept = password.clone();
        this.keys = new WatchedFile<>("key store", pkcs12, file -> load(file, kept));
    }

    private static X509ExtendedKeyManager load(java.nio.file.Path file, char[] password) {
        try {
            KeyStore store = TlsSettings.load(file, password, "key store");
            if (Collections.list(store.aliases()).stream().noneMatch(a -> isKey(store, a))) {
                throw new IllegalArgumentException("the key store " + file + " holds no key");
            }
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(store, password);
            for (KeyManager m : kmf.getKeyManagers()) {
                if (m instanceof X509ExtendedKeyManager x) {
                    return x;
                }
            }
            throw new IllegalStateException("the JDK's key manager factory made no X.509 key manager");
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot use the key store " + file + ": " + e.getMessage(), e);
        }
    }

    private static boolean isKey(KeyStore store, String alias) {
        try {
            return store.isKeyEntry(alias);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    /** {@code alias} of the current read, named with that read's number: {@code 3:server}. */
    private String chosen(Function<X509ExtendedKeyManager, String> choose) {
        WatchedFile.Read<X509ExtendedKeyManager> read = keys.current();
        String alias = choose.apply(read.value());
        return alias == null ? null : read.generation() + ":" + alias;
    }

    private String[] all(Function<X509ExtendedKeyManager, String[]> list) {
        WatchedFile.Read<X509ExtendedKeyManager> read = keys.current();
        String[] aliases = list.apply(read.value());
        if (aliases == null) {
            return null;
        }
        String[] named = new String[aliases.length];
        for (int i = 0; i < aliases.length; i++) {
            named[i] = read.generation() + ":" + aliases[i];
        }
        return named;
    }

    /** The read an alias of {@link #chosen} names, and its own alias; null for one not handed out here. */
    private <T> T fromRead(String alias, java.util.function.BiFunction<X509ExtendedKeyManager, String, T> get) {
        int colon = alias == null ? -1 : alias.indexOf(':');
        if (colon <= 0) {
            return null;
        }
        long generation;
        try {
            generation = Long.parseLong(alias.substring(0, colon));
        } catch (NumberFormatException e) {
            return null;
        }
        WatchedFile.Read<X509ExtendedKeyManager> read = keys.generation(generation);
        return read == null ? null : get.apply(read.value(), alias.substring(colon + 1));
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
        return chosen(k -> k.chooseClientAlias(keyType, issuers, socket));
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
        return chosen(k -> k.chooseServerAlias(keyType, issuers, socket));
    }

    @Override
    public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
        return chosen(k -> k.chooseEngineClientAlias(keyType, issuers, engine));
    }

    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
        return chosen(k -> k.chooseEngineServerAlias(keyType, issuers, engine));
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
        return all(k -> k.getClientAliases(keyType, issuers));
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
        return all(k -> k.getServerAliases(keyType, issuers));
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
        return fromRead(alias, X509ExtendedKeyManager::getCertificateChain);
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
        return fromRead(alias, X509ExtendedKeyManager::getPrivateKey);
    }
}
