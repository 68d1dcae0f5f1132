package io.switchboard.idl.runtime;

import io.switchboard.idl.InterfaceModel;
import io.switchboard.idl.SchemaReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * A component interface as the runtime sees it: its name, namespace, operations, the documents
 * it publishes (interface schema, WSDL, {@code .proto}) and a slot per wire codec. Each generated
 * component has one, as {@code XxxComponent.DESCRIPTOR}; an interface read at run time gets one
 * from {@code DynamicInterface}. The descriptor names no codec itself: generated code fills the
 * slots, and a protocol asks for the kind it needs ({@link #codec(Class)}), so a new wire format
 * is a new slot, not an edit here.
 *
 * <pre>{@code
 * ServiceDescriptor d = EchoComponent.DESCRIPTOR;
 * OperationDescriptor op = d.operation("echoDoubles");
 * String wsdl = d.document(ServiceDescriptor.WSDL);
 * ProtoCodec codec = d.codec(ProtoCodec.class);   // the generated, reflection-free protobuf codec
 * }</pre>
 */
public final class ServiceDescriptor {
    /** The interface schema, as written by the component's author. */
    public static final String SCHEMA = "xsd";
    /** The WSDL 1.1 document the compiler derived, with a placeholder address. */
    public static final String WSDL = "wsdl";
    /** The protobuf description of the gRPC wire the compiler derived. */
    public static final String PROTO = "proto";

    private final String name;
    private final String namespace;
    private final Class<?> anchor;
    private final Map<String, String> documentResources;
    private final Map<String, Supplier<String>> documentMakers;
    private final Map<String, String> documentTexts = new ConcurrentHashMap<>();
    private final Map<Class<?>, Object> codecs;
    private final Map<String, OperationDescriptor> operations = new LinkedHashMap<>();
    private volatile InterfaceModel model;

    private ServiceDescriptor(Builder b) {
        this.name = b.name;
        this.namespace = b.namespace;
        this.anchor = b.anchor;
        this.documentResources = Map.copyOf(b.documents);
        this.documentMakers = Map.copyOf(b.documentMakers);
        this.codecs = Map.copyOf(b.codecs);
        this.model = b.model;
        if (b.model != null) {
            documentTexts.put(SCHEMA, b.model.schemaText());
        }
        for (OperationDescriptor.Builder ob : b.operations) {
            OperationDescriptor d = new OperationDescriptor(this, ob);
            operations.put(d.name(), d);
        }
    }

    /**
     * Used by generated code. {@code anchor} is a class next to the published documents, whose
     * class loader finds them; null for an interface read at run time ({@link Builder#model}).
     */
    public static Builder builder(String name, String namespace, Class<?> anchor) {
        return new Builder(name, namespace, anchor);
    }

    /**
     * The codec of the given kind that this interface was compiled with (for example {@code
     * ProtoCodec.class}, {@code MessageChecks.class} or {@code XmlCodec.Factory.class}), or null when it carries none.
     */
    public <C> C codec(Class<C> kind) {
        return kind.cast(codecs.get(kind));
    }

    /** Whether this interface was read at run time rather than compiled (its documents are then made from its model). */
    public boolean runtimeModel() {
        return anchor == null;
    }

    /** The component name from the schema's {@code sb:component}. */
    public String name() {
        return name;
    }

    public String namespace() {
        return namespace;
    }

    public List<OperationDescriptor> operations() {
        return Collections.unmodifiableList(new ArrayList<>(operations.values()));
    }

    public OperationDescriptor operation(String operationName) {
        OperationDescriptor d = operations.get(operationName);
        if (d == null) {
            throw new NoSuchElementException(name + " has no operation '" + operationName + "'");
        }
        return d;
    }

    public boolean hasOperation(String operationName) {
        return operations.containsKey(operationName);
    }

    /** The interface schema, as written by the component's author. */
    public String schema() {
        String s = document(SCHEMA);
        if (s == null) {
            throw new IllegalStateException(name + " carries no interface schema");
        }
        return s;
    }

    /**
     * A document this interface publishes ({@link #SCHEMA}, {@link #WSDL}, {@link #PROTO}, or one a
     * protocol of its own adds), or null when it was compiled without it.
     */
    public String document(String kind) {
        String text = documentTexts.get(kind);
        if (text == null) {
            String resource = documentResources.get(kind);
            Supplier<String> maker = documentMakers.get(kind);
            if (resource == null && maker == null) {
                return null;
            }
            text = resource != null ? resource(resource) : maker.get();
            documentTexts.put(kind, text);
        }
        return text;
    }

    public InterfaceModel model() {
        InterfaceModel m = model;
        if (m == null) {
            synchronized (this) {
                if (model == null) {
                    model = SchemaReader.read(schema());
                }
                m = model;
            }
        }
        return m;
    }

    private String resource(String path) {
        try (InputStream in = anchor.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("resource " + path + " of " + name + " is missing from the class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String toString() {
        return "ServiceDescriptor[" + name + " " + namespace + "]";
    }

    /** Builds a descriptor; generated code and {@code DynamicInterface} use it. */
    public static final class Builder {
        private final String name;
        private final String namespace;
        private final Class<?> anchor;
        private final Map<String, String> documents = new LinkedHashMap<>();
        private final Map<String, Supplier<String>> documentMakers = new LinkedHashMap<>();
        private final Map<Class<?>, Object> codecs = new LinkedHashMap<>();
        private final List<OperationDescriptor.Builder> operations = new ArrayList<>();
        private InterfaceModel model;

        private Builder(String name, String namespace, Class<?> anchor) {
            this.name = Objects.requireNonNull(name, "name");
            this.namespace = Objects.requireNonNull(namespace, "namespace");
            this.anchor = anchor;
        }

        /** A published document ({@link #SCHEMA}, {@link #WSDL}, {@link #PROTO}, ...) as a class-path resource beside the anchor. */
        public Builder document(String kind, String resource) {
            if (anchor == null) {
                throw new IllegalStateException("documents are resources beside an anchor class; " + name + " has none");
            }
            documents.put(Objects.requireNonNull(kind), Objects.requireNonNull(resource));
            return this;
        }

        /**
         * For an interface read at run time: a published document ({@link #WSDL}, {@link #PROTO})
         * made from its model the first time it is asked for, since most callers never ask.
         */
        public Builder document(String kind, Supplier<String> maker) {
            if (anchor != null) {
                throw new IllegalStateException(name + " is compiled: its documents are resources beside " + anchor.getName());
            }
            documentMakers.put(Objects.requireNonNull(kind), Objects.requireNonNull(maker));
            return this;
        }

        /** Fills the codec slot of {@code kind}. */
        public <C> Builder codec(Class<C> kind, C codec) {
            codecs.put(Objects.requireNonNull(kind), kind.cast(Objects.requireNonNull(codec)));
            return this;
        }

        /** For an interface read at run time: its model, whose schema text is the one document it has. */
        public Builder model(InterfaceModel interfaceModel) {
            model = Objects.requireNonNull(interfaceModel);
            return this;
        }

        public Builder operations(OperationDescriptor.Builder... ops) {
            operations.addAll(List.of(ops));
            return this;
        }

        public Builder operations(List<OperationDescriptor.Builder> ops) {
            operations.addAll(ops);
            return this;
        }

        public ServiceDescriptor build() {
            if (anchor == null && model == null) {
                throw new IllegalStateException(name + ": a descriptor needs an anchor class for its documents or a model");
            }
            return new ServiceDescriptor(this);
        }
    }
}
