package io.switchboard.registry;

import io.switchboard.client.ReplicatedChannel;
import io.switchboard.metastub.MetaStub;
import io.switchboard.metastub.ProtocolClients;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.registry.wire.BindFaultException;
import io.switchboard.registry.wire.RebindFaultException;
import io.switchboard.registry.wire.RegistryComponent;
import io.switchboard.registry.wire.RenewFaultException;
import io.switchboard.registry.wire.RenewWithStatsFaultException;
import io.switchboard.protocol.SwitchboardException;
import io.switchboard.registry.wire.UnbindFaultException;
import io.switchboard.protocol.CallOptions;
import io.switchboard.registry.wire.Event;
import io.switchboard.registry.wire.RegistryStub;
import io.switchboard.registry.wire.WatchResponse;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.StatusRuntimeException;
import io.switchboard.protocol.TlsSettings;
import io.switchboard.registry.wire.Entry;
import io.switchboard.registry.wire.ListEntries;
import io.switchboard.registry.wire.ListEntriesResponse;
import io.switchboard.registry.wire.Lookup;
import io.switchboard.registry.wire.LookupLean;
import io.switchboard.registry.wire.LookupResponse;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Talks to a registry: the generated registry stub over SOAP, with plain Java types.
 *
 * <p>Several registry servers that share one store (ZooKeeper) can be given as a list, or as one
 * string with the URLs separated by commas: writes go to the first that answers and move to the
 * next when one cannot be reached (or, for idempotent operations, when one fails mid-call). A
 * {@code bind} that may have reached a registry is not repeated on another; a component server's
 * heartbeat binds again if the entry is missing. Reads and watches do the same from a server
 * picked at random per client, so that many clients given the same list spread over it.
 *
 * <pre>{@code
 * try (RegistryClient registry = RegistryClient.connect("http://127.0.0.1:8081/axis2/services/Registry", secret)) {
 *     List<ComponentEntry> echoes = registry.lookup("Echo");
 * }
 * RegistryClient both = RegistryClient.connect("http://zk-reg-1:8081/axis2/services/Registry,"
 *         + "http://zk-reg-2:8081/axis2/services/Registry", secret);
 * }</pre>
 */
public final class RegistryClient implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RegistryClient.class);
    /** How long renewals go without call figures after a registry did not take them. */
    static final Duration STATS_PAUSE = Duration.ofMinutes(5);
    /** The longest a watch waits for a change; under the SOAP server's 60 s idle timeout. */
    public static final int MAX_WATCH_SECONDS = 25;
    /**
     * The longest a watch waits for a change when there are other registries to move to: a poll
     * that a cut-off registry never answers then costs at most this plus {@link
     * #MAX_WATCH_ANSWER}, not {@link #MAX_WATCH_SECONDS} and a call timeout (55 s were seen).
     */
    public static final int FAILOVER_WATCH_SECONDS = 5;
    /** How long a watch's answer may take beyond its wait (the client's shorter call timeout applies). */
    private static final Duration MAX_WATCH_ANSWER = Duration.ofSeconds(5);
    /** The longest a registry call waits for its answer (a client's shorter call timeout applies). */
    private static final Duration MAX_CALL_TIMEOUT = Duration.ofSeconds(30);
    /**
     * How long a lookup waits for one registry's answer when there are others to move to (the
     * client's shorter call timeout applies): a registry that hangs then costs a lookup this on
     * its stream listener, not the call timeout. A lookup takes milliseconds; {@code list}, which
     * may read every entry, keeps the call timeout.
     */
    private static final Duration MAX_LOOKUP_ANSWER = Duration.ofSeconds(5);
    private final ReplicatedChannel channel;
    private final RegistryStub stub;
    /** One SOAP client for every registry server of this client, reads and writes. */
    private final ProtocolClients clients;
    /** Reads and watches, over the registry servers from one picked at random; null with one registry. */
    private final ReplicatedChannel reads;
    private final RegistryStub readStub;
    private final String credential;
    private final List<String> urls;
    private final Duration callTimeout;
    /** What one registry has to answer a lookup ({@link #MAX_LOOKUP_ANSWER} with several). */
    private final Duration lookupTimeout;
    /** {@link System#nanoTime} until which renewals carry no figures (a registry did not take them); 0: none. */
    private volatile long statsPausedUntil;
    /** Which registries' stream address (in this client's read order) it shares with the other clients of the JVM. */
    private final StreamAddresses.Key streamKey;
    /** The settings the probe's SOAP client of its own is made with. */
    private final ClientSettings callSettings;
    /** The registry servers, in the order reads try them. */
    private final List<ComponentEntry> readRegistries;
    private final TlsSettings tls;
    /** The connection reads use on the stream's listener, and where it goes; guarded by this. */
    private ManagedChannel readChannel;
    private String readAddress;
    private boolean closed;

    /** The interface documents lean lookups were sent, by digest. */
    private final LeanAnswers lean = new LeanAnswers();
    /** Set once the registry's listener does not know {@code lookupLean} (an older registry): lookups read in full. */
    private volatile boolean leanUnknown;

    /** Whose {@link ClientSettings#tokenNow()} the watch stream's listener is sent, per call. */
    private final ClientSettings token;

    private RegistryClient(List<String> urls, String credential, ClientSettings settings) {
        if (urls.isEmpty()) {
            throw new IllegalArgumentException("no registry URL given");
        }
        List<ComponentEntry> registries = new ArrayList<>();
        for (String url : urls) {
            URI uri = URI.create(url);
            if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme())) {
                throw new IllegalArgumentException("a registry URL is the registry's SOAP endpoint (http://HOST:PORT/"
                        + "axis2/services/Registry), not " + url);
            }
            // one replica per registry server, in the order given: IN_ORDER makes it fail-over only
            registries.add(new ComponentEntry("Registry", "registry-" + registries.size(),
                    List.of(new Endpoint(Protocols.failsafe().name(), url)), null, null, null));
        }
        this.urls = List.copyOf(urls);
        this.credential = credential;
        this.tls = settings.tls();
        this.token = settings;
        // the client's call timeout, at most 30 s: a registry that is cut off costs a caller
        // that wants to move on quickly (a short call timeout) no more than that before the next one
        this.callTimeout = settings.callTimeout().compareTo(MAX_CALL_TIMEOUT) < 0 ? settings.callTimeout()
                : MAX_CALL_TIMEOUT;
        this.callSettings = settings.withCallTimeout(callTimeout);
        this.lookupTimeout = urls.size() > 1 && MAX_LOOKUP_ANSWER.compareTo(callTimeout) < 0 ? MAX_LOOKUP_ANSWER
                : callTimeout;
        this.clients = new ProtocolClients(callSettings);
        this.channel = replicated(registries, clients);
        this.stub = new RegistryStub(channel);
        if (registries.size() > 1) {
            // reads and watches start at a registry server of this client's own, picked at random, so
            // that many clients given the same list spread over it; writes keep the order given
            List<ComponentEntry> rotated = new ArrayList<>(registries);
            java.util.Collections.rotate(rotated, -java.util.concurrent.ThreadLocalRandom.current().nextInt(rotated.size()));
            this.readRegistries = List.copyOf(rotated);
            this.reads = replicated(readRegistries, clients);
            this.readStub = new RegistryStub(reads);
        } else {
            this.readRegistries = List.copyOf(registries);
            this.reads = null;
            this.readStub = stub;
        }
        // shared by the clients that read in the same order: clients spread over several servers stay spread
        this.streamKey = new StreamAddresses.Key(readRegistries.stream()
                .map(r -> r.endpoints().get(0).address()).toList(), tls);
    }

    /** A fail-over channel over {@code registries} whose SOAP calls go through {@code over}. */
    private ReplicatedChannel replicated(List<ComponentEntry> registries, ProtocolClients over) {
        String failsafe = registries.get(0).endpoints().get(0).protocol();
        // not traced: lease renewals every few seconds would be traces of their own, and noise
        java.util.function.Function<ComponentEntry, MetaStub> stubs = e -> MetaStub.builder(RegistryComponent.DESCRIPTOR)
                .protocols(failsafe).endpoints(e.endpoints()).settings(callSettings).clients(over).tracing(null)
                .build();
        return new ReplicatedChannel("Registry", registries, stubs, ReplicatedChannel.Choice.IN_ORDER,
                Duration.ZERO, RegistryClient::storeUnavailable);
    }

    /**
     * A write refused with "unavailable": that registry server cannot reach its store and changed
     * nothing; another server of the same store may, so the call moves on to it. (A component whose
     * first registry lost ZooKeeper renewed there in vain until its lease ran out.)
     */
    private static boolean storeUnavailable(Throwable answer) {
        String code = answer instanceof BindFaultException f ? f.getFaultInfo().getCode()
                : answer instanceof RebindFaultException f ? f.getFaultInfo().getCode()
                : answer instanceof RenewFaultException f ? f.getFaultInfo().getCode()
                : answer instanceof RenewWithStatsFaultException f ? f.getFaultInfo().getCode()
                : answer instanceof UnbindFaultException f ? f.getFaultInfo().getCode()
                : null;
        return "unavailable".equals(code);
    }

    /**
     * A client for reads only, or for writes to a registry that takes them without a credential.
     * {@code url} may list several registry servers, separated by commas.
     */
    public static RegistryClient connect(String url) {
        return connect(url, null);
    }

    /** A client whose writes carry {@code credential}, the registry's shared secret. */
    public static RegistryClient connect(String url, String credential) {
        return connect(split(url), credential, ClientSettings.defaults());
    }

    /**
     * A client of several registry servers that share one store, tried in this order; {@code
     * settings} carry, for instance, the TLS trust for {@code https} registries.
     */
    public static RegistryClient connect(List<String> urls, String credential, ClientSettings settings) {
        return new RegistryClient(urls, credential, settings);
    }

    /** {@code "u1,u2"} as {@code [u1, u2]}. */
    public static List<String> split(String urls) {
        return Arrays.stream(urls.split(",")).map(String::trim).filter(u -> !u.isEmpty()).toList();
    }

    /** The registry's URL; several, separated by commas, when this client fails over between them. */
    public String url() {
        return String.join(",", urls);
    }

    public List<String> urls() {
        return urls;
    }

    public void bind(ComponentEntry entry) {
        bind(entry, null);
    }

    /**
     * {@link #bind(ComponentEntry)} with a timeout per registry tried (null: the client's); a bind
     * that times out may have run, so it is not sent to the next registry.
     */
    public void bind(ComponentEntry entry, Duration timeout) {
        RegistryStub s = writes(timeout);
        try {
            s.bind(Entries.toWire(entry), credential);
        } catch (BindFaultException e) {
            throw new RegistryException(e.getFaultInfo().getCode(), "bind " + entry.name() + ": "
                    + e.getFaultInfo().getReason());
        }
    }

    /** The stub for writes, with {@code timeout} per registry tried (null: the client's call timeout). */
    private RegistryStub writes(Duration timeout) {
        return timeout == null ? stub : stub.withOptions(CallOptions.DEFAULT.withTimeout(timeout));
    }

    public void rebind(ComponentEntry entry) {
        rebind(entry, null);
    }

    /** {@link #rebind(ComponentEntry)} with a timeout per registry tried (null: the client's). */
    public void rebind(ComponentEntry entry, Duration timeout) {
        try {
            writes(timeout).rebind(Entries.toWire(entry), credential);
        } catch (RebindFaultException e) {
            throw new RegistryException(e.getFaultInfo().getCode(), "rebind " + entry.name() + ": "
                    + e.getFaultInfo().getReason());
        }
    }

    /** Removes one instance, or every instance of {@code name} when {@code instanceId} is null. */
    public int unbind(String name, String instanceId) {
        try {
            return stub.unbind(name, instanceId, credential);
        } catch (UnbindFaultException e) {
            throw new RegistryException(e.getFaultInfo().getCode(), "unbind " + name + ": "
                    + e.getFaultInfo().getReason());
        }
    }

    /**
     * Extends the lease of one instance; false when the registry no longer holds it (bind it
     * again). {@link ComponentServer} calls this on its heartbeat.
     */
    public boolean renew(String name, String instanceId) {
        return renew(name, instanceId, null);
    }

    /**
     * {@link #renew(String, String)} with a timeout per registry tried (null: the client's). A
     * heartbeat passes its own period: a registry that does not answer within it is as good as
     * gone, and the next one must be asked while the lease still runs (with the default 30 s, a
     * component whose first registry was cut off dropped out of the registry for 30 s).
     */
    public boolean renew(String name, String instanceId, Duration timeout) {
        try {
            RegistryStub s = writes(timeout);
            return s.renew(name, instanceId, credential);
        } catch (RenewFaultException e) {
            throw new RegistryException(e.getFaultInfo().getCode(), "renew " + name + ": "
                    + e.getFaultInfo().getReason());
        }
    }

    /**
     * {@link #renew(String, String, Duration)} that also reports the instance's call figures, for
     * the registry's console. A registry that does not take them (one older than the {@code
     * renewWithStats} operation, or one that finds them invalid) is renewed without them, and for
     * {@link #STATS_PAUSE} renewals carry none; the lease never depends on the figures. Null
     * {@code stats}: a plain renew.
     */
    public boolean renew(String name, String instanceId, Duration timeout, CallSummary stats) {
        if (stats == null || (statsPausedUntil != 0 && System.nanoTime() - statsPausedUntil < 0)) {
            return renew(name, instanceId, timeout);
        }
        RegistryStub s = writes(timeout);
        try {
            return s.renewWithStats(name, instanceId, credential, CallSummary.toWire(stats));
        } catch (RenewWithStatsFaultException e) {
            String code = e.getFaultInfo().getCode();
            if (!"invalid".equals(code)) {
                throw new RegistryException(code, "renew " + name + ": " + e.getFaultInfo().getReason());
            }
            pauseStats(name, "refused them: " + e.getFaultInfo().getReason());
        } catch (SwitchboardException e) {
            // an older registry knows no renewWithStats (an unknown operation); or the registry could
            // not be reached, and the plain renew below fails the same way, which is then reported
            boolean bound = renew(name, instanceId, timeout);
            pauseStats(name, "did not take them (a registry older than renewWithStats?): " + e.getMessage());
            return bound;
        }
        return renew(name, instanceId, timeout);
    }

    private void pauseStats(String name, String why) {
        statsPausedUntil = System.nanoTime() + STATS_PAUSE.toNanos() | 1;
        LOG.info("renewing {} without call figures for {} s: the registry {}", name, STATS_PAUSE.toSeconds(), why);
    }

    /**
     * Every instance bound under {@code name}; empty if none. Read in the lean form when the
     * registry's listener has it: each interface document is sent once per answer, and not at all
     * when this client holds it from an earlier answer (checked against its digest first).
     *
     * @throws RegistryException ({@code invalid}) the registry sent a document that does not
     *         match its digest
     */
    public List<ComponentEntry> lookup(String name) {
        if (!leanUnknown) {
            List<ComponentEntry> found = lookupLean(name, lean.known(name));
            if (found == null) {
                // an entry named a document this client let go meanwhile: ask for every one
                found = lookupLean(name, List.of());
                if (found == null) {
                    throw new RegistryException("invalid", "lookup " + name
                            + ": the registry named an interface document it did not send");
                }
            }
            if (found != LEAN_UNAVAILABLE) {
                return found;
            }
        }
        Lookup request = new Lookup();
        request.setName(name);
        List<Entry> fast = readOnStream(WatchStreamMethod.LOOKUP, request,
                LookupResponse::getEntries, lookupTimeout);
        return Entries.fromWire(fast != null ? fast
                : readStub.withOptions(CallOptions.DEFAULT.withTimeout(lookupTimeout)).lookup(name));
    }

    /** Every entry, without interface schemas. */
    public List<ComponentEntry> list() {
        List<Entry> fast = readOnStream(WatchStreamMethod.LIST,
                new ListEntries(), ListEntriesResponse::getEntries, callTimeout);
        return Entries.fromWire(fast != null ? fast : readStub.listEntries());
    }

    /** What {@link #lookupLean} answers when the lean form cannot be read (no listener, an older registry). */
    private static final List<ComponentEntry> LEAN_UNAVAILABLE = java.util.Collections.unmodifiableList(new ArrayList<>());

    /**
     * A lean lookup on the stream listener listing {@code known} digests: the entries, {@link
     * #LEAN_UNAVAILABLE} (read in full instead), or null when an entry names a document neither
     * sent nor held.
     */
    private List<ComponentEntry> lookupLean(String name, List<String> known) {
        LookupLean request = new LookupLean();
        request.setName(name);
        request.setKnownSchemas(known.isEmpty() ? null : new ArrayList<>(known));
        byte[] answer;
        try {
            answer = callOnStream(WatchStreamMethod.LOOKUP_LEAN_WIRE, request, true, lookupTimeout);
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() == io.grpc.Status.Code.UNIMPLEMENTED) {
                leanUnknown = true;
                return LEAN_UNAVAILABLE;
            }
            throw new RegistryException("invalid", "lookup " + name + ": " + e.getStatus().getDescription());
        }
        return answer == null ? LEAN_UNAVAILABLE : lean.read(name, answer);
    }

    /**
     * A read on the registry's stream listener, in protobuf; null when there is none or it failed
     * (the caller then reads over SOAP, which fails over between registries and reports errors as
     * ever).
     */
    private <Q, A> List<Entry> readOnStream(MethodDescriptor<Q, A> method, Q request,
            java.util.function.Function<A, List<Entry>> entries, Duration timeout) {
        A answer = callOnStream(method, request, false, timeout);
        if (answer == null) {
            return null;
        }
        List<Entry> found = entries.apply(answer);
        return found == null ? List.of() : found;
    }

    /**
     * One call on the stream listener; null when there is none or it failed. {@code refusals}:
     * an unknown method or a request refused as invalid is thrown (the listener is fine, the
     * request is not) rather than taken for a failed listener; {@code timeout}: how long it may take.
     */
    private <Q, A> A callOnStream(MethodDescriptor<Q, A> method, Q request, boolean refusals, Duration timeout) {
        String at;
        try {
            at = streamAddress();
        } catch (RuntimeException e) {
            return null;
        }
        ManagedChannel ch = at == null ? null : readChannel(at);
        if (ch == null) {
            return null;
        }
        try {
            return io.grpc.stub.ClientCalls.blockingUnaryCall(io.grpc.ClientInterceptors.intercept(ch,
                            io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(streamHeaders())), method,
                    io.grpc.CallOptions.DEFAULT.withDeadlineAfter(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS),
                    request);
        } catch (StatusRuntimeException e) {
            if (refusals && (e.getStatus().getCode() == io.grpc.Status.Code.UNIMPLEMENTED
                    || e.getStatus().getCode() == io.grpc.Status.Code.INVALID_ARGUMENT)) {
                throw e;
            }
            if (e.getStatus().getCode() == io.grpc.Status.Code.PERMISSION_DENIED
                    || e.getStatus().getCode() == io.grpc.Status.Code.UNAUTHENTICATED) {
                // the registry's policy said no: SOAP would say the same, and the listener is fine
                throw new io.switchboard.protocol.PermissionDeniedException(
                        e.getStatus().getCode() == io.grpc.Status.Code.UNAUTHENTICATED
                                ? io.switchboard.protocol.PermissionDeniedException.UNAUTHENTICATED
                                : io.switchboard.protocol.PermissionDeniedException.DENIED,
                        null, e.getStatus().getDescription());
            }
            LOG.debug("{} at {}: {}; reading over SOAP", method.getBareMethodName(), at, e.getStatus());
            streamFailed(at);
            return null;
        }
    }

    /** The connection reads use while the stream stays at {@code address}; held until it moves or this client closes. */
    private synchronized ManagedChannel readChannel(String address) {
        if (closed) {
            return null;
        }
        if (readChannel != null && !address.equals(readAddress)) {
            WatchChannels.release(readChannel);
            readChannel = null;
        }
        if (readChannel == null) {
            try {
                readChannel = WatchChannels.acquire(address, tls);
            } catch (RuntimeException e) {
                return null;
            }
            readAddress = address;
        }
        return readChannel;
    }

    /** One answer of the registry's {@code watch}; see {@link RegistryWatch}, which is how to use it. */
    record WatchResult(String epoch, long version, boolean reset, List<RegistryEvent> events) {
    }

    /**
     * How long one watch poll asks the registry to wait for a change: {@value #MAX_WATCH_SECONDS}
     * s with one registry, {@value #FAILOVER_WATCH_SECONDS} s with several, so that a watch on a
     * registry that is cut off (which answers nothing, not even "no change") notices within that
     * wait and {@link #watchTimeout} and moves to the next registry.
     */
    int watchWaitSeconds() {
        return urls.size() > 1 ? FAILOVER_WATCH_SECONDS : MAX_WATCH_SECONDS;
    }

    /** How long a poll that waits {@code waitSeconds} may take in all: the wait, plus the call timeout up to 5 s. */
    Duration watchTimeout(int waitSeconds) {
        Duration answer = callTimeout.compareTo(MAX_WATCH_ANSWER) < 0 ? callTimeout : MAX_WATCH_ANSWER;
        return Duration.ofSeconds(waitSeconds).plus(answer);
    }

    /** One long poll: the changes after {@code since} to {@code names} (all when empty), waiting up to {@code waitSeconds}. */
    WatchResult watch(Collection<String> names, String epoch, Long since, int waitSeconds) {
        return fromWire(readStub.withOptions(CallOptions.DEFAULT.withTimeout(watchTimeout(waitSeconds)))
                .watch(new ArrayList<>(names), epoch, since, waitSeconds));
    }

    /** A {@code watchResponse} (a SOAP answer or a streamed message) with plain Java types. */
    static WatchResult fromWire(WatchResponse r) {
        List<RegistryEvent> events = new ArrayList<>();
        if (r.getEvents() != null) {
            for (Event e : r.getEvents()) {
                RegistryEvent.Kind kind = RegistryEvent.Kind.fromWire(e.getKind());
                ComponentEntry entry = e.getEntry() == null ? null : Entries.fromWire(e.getEntry());
                if (kind != RegistryEvent.Kind.GO && entry == null) {
                    throw new IllegalStateException("the registry sent a " + e.getKind() + " event without its entry");
                }
                events.add(new RegistryEvent(kind, e.getName(), e.getInstanceId(), entry));
            }
        }
        return new WatchResult(r.getEpoch(), r.getVersion(), r.getReset(), events);
    }

    /**
     * Where the registry streams changes ({@code grpc://HOST:PORT}), asked with a {@code watch}
     * that does not wait, once for every client of this JVM to the same registries, and kept until
     * {@link #streamFailed}; null when the registry has no stream (one that predates it, or turned
     * off), and watches then long-poll.
     */
    String streamAddress() {
        return streamAddress(List.of());
    }

    /**
     * {@link #streamAddress()}, asked (when not known yet) with a watch of {@code names}, every
     * name when empty: a registry's policy may let a client watch some names only.
     */
    String streamAddress(Collection<String> names) {
        return StreamAddresses.get(streamKey, start -> probeStream(start, names), !names.isEmpty());
    }

    /**
     * Asks over a SOAP client of its own, closed with its connection as soon as the answer is in:
     * a client that only watches (its snapshot and changes come over the stream) keeps no SOAP
     * connection open at the registry, where thousands of them would fill the listener's limit.
     * The ask is a watch that does not wait, so each registry gets what a watch's answer gets
     * ({@link #watchTimeout}, at most 5 s), from {@code start} (an index into the read order) on:
     * after a stream failed, the registry after the one that named it, which may hang.
     */
    private StreamAddresses.Answer probeStream(int start, Collection<String> names) {
        RuntimeException last = null;
        for (int k = 0; k < readRegistries.size(); k++) {
            int at = (start + k) % readRegistries.size();
            try (ProtocolClients once = new ProtocolClients(callSettings);
                 ReplicatedChannel probe = replicated(List.of(readRegistries.get(at)), once)) {
                WatchResponse r = new RegistryStub(probe).withOptions(CallOptions.DEFAULT.withTimeout(watchTimeout(0)))
                        .watch(new ArrayList<>(names), null, null, 0);
                return new StreamAddresses.Answer(Optional.ofNullable(r.getStream()), at);
            } catch (RuntimeException e) {
                if (last != null) {
                    e.addSuppressed(last);
                }
                last = e;
            }
        }
        throw last;
    }

    /** The registry server this client's reads and watches start at (the first of its list, or one picked at random). */
    String firstReadAddress() {
        return readRegistries.get(0).endpoints().get(0).address();
    }

    /** The stream at {@code address} failed: the next watch asks again (perhaps of another registry server). */
    void streamFailed(String address) {
        StreamAddresses.failed(streamKey, address);
    }

    /** The TLS settings a watch stream's connection uses ({@code grpcs://}); null: the JVM's trust. */
    TlsSettings tls() {
        return tls;
    }

    /**
     * The headers of a call on the watch stream's listener: the bearer token of the settings, asked
     * now (the SOAP calls send it through their protocol client).
     */
    io.grpc.Metadata streamHeaders() {
        io.grpc.Metadata headers = new io.grpc.Metadata();
        String t = token.tokenNow();
        if (t != null) {
            headers.put(WatchStreamMethod.AUTHORIZATION, "Bearer " + t);
        }
        return headers;
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            if (readChannel != null) {
                WatchChannels.release(readChannel);
                readChannel = null;
            }
        }
        channel.close();
        if (reads != null) {
            reads.close();
        }
        clients.close();
    }
}
