package io.switchboard.idl.runtime;

import io.switchboard.idl.InterfaceModel;
import io.switchboard.idl.SchemaReader;
import io.switchboard.idl.runtime.binary.BinaryCodec;
import jakarta.xml.bind.JAXBContext;
import jakarta.xml.bind.JAXBException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.function.IntFunction;

/**
 * A compiled component interface: its name, namespace, operations, the interface schema and WSDL
 * it was generated with, and the JAXB context for its messages. Each generated component has one,
 * as {@code XxxComponent.DESCRIPTOR}.
 *
 * <pre>{@code
 * ServiceDescriptor d = EchoComponent.DESCRIPTOR;
 * OperationDescriptor op = d.operation("echoDoubles");
 * String wsdl = d.wsdl();
 * String proto = d.proto();          // the gRPC contract of the bulk protocol
 * BinaryCodec codec = d.binaryCodec(); // its generated, reflection-free encoder
 * }</pre>
 */
public final class ServiceDescriptor {
    private final String name;
    private final String namespace;
    private final Class<?> anchor;
    private final String schemaResource;
    private final String wsdlResource;
    private final String protoResource;
    private final BinaryCodec binaryCodec;
    private final Map<String, OperationDescriptor> operations = new LinkedHashMap<>();
    private volatile InterfaceModel model;
    private volatile StrictXmlReader.Plan xmlPlan;
    private volatile JAXBContext jaxbContext;
    private volatile String schemaText;
    private volatile String wsdlText;
    private volatile String protoText;
    /** Null for generated code (JAXB on its beans); set for an interface read at run time. */
    private final IntFunction<XmlCodec> xmlCodecs;

    private ServiceDescriptor(String name, String namespace, Class<?> anchor, String schemaResource,
                              String wsdlResource, String protoResource, BinaryCodec binaryCodec,
                              List<OperationDescriptor.Builder> ops) {
        this(name, namespace, anchor, schemaResource, wsdlResource, protoResource, binaryCodec, null, ops);
    }

    private ServiceDescriptor(String name, String namespace, Class<?> anchor, String schemaResource,
                              String wsdlResource, String protoResource, BinaryCodec binaryCodec,
                              IntFunction<XmlCodec> xmlCodecs, List<OperationDescriptor.Builder> ops) {
        this.xmlCodecs = xmlCodecs;
        this.name = name;
        this.namespace = namespace;
        this.anchor = anchor;
        this.schemaResource = schemaResource;
        this.wsdlResource = wsdlResource;
        this.protoResource = protoResource;
        this.binaryCodec = binaryCodec;
        for (OperationDescriptor.Builder b : ops) {
            OperationDescriptor d = new OperationDescriptor(this, b);
            operations.put(d.name(), d);
        }
    }

    /**
     * Used by generated code. {@code anchor} is a class next to the resources, whose class loader
     * finds them.
     */
    public static ServiceDescriptor of(String name, String namespace, Class<?> anchor, String schemaResource,
                                       String wsdlResource, OperationDescriptor.Builder... ops) {
        return new ServiceDescriptor(name, namespace, anchor, schemaResource, wsdlResource, null, null, List.of(ops));
    }

    /**
     * Used by generated code: also names the {@code .proto} resource and gives the generated
     * binary codec of the message beans.
     */
    public static ServiceDescriptor of(String name, String namespace, Class<?> anchor, String schemaResource,
                                       String wsdlResource, String protoResource, BinaryCodec binaryCodec,
                                       OperationDescriptor.Builder... ops) {
        return new ServiceDescriptor(name, namespace, anchor, schemaResource, wsdlResource, protoResource,
                binaryCodec, List.of(ops));
    }

    /**
     * A descriptor of an interface read at run time, without generated classes: its messages are
     * written and read by the codecs given (see {@code io.switchboard.idl.runtime.dynamic}).
     * {@link #wsdl()}, {@link #proto()} and {@link #jaxbContext()} are not available.
     */
    public static ServiceDescriptor ofModel(InterfaceModel model, BinaryCodec binaryCodec,
                                            IntFunction<XmlCodec> xmlCodecs, List<OperationDescriptor.Builder> ops) {
        ServiceDescriptor d = new ServiceDescriptor(model.componentName(), model.targetNamespace(), null, null, null,
                null, binaryCodec, java.util.Objects.requireNonNull(xmlCodecs, "xmlCodecs"), ops);
        d.model = model;
        d.schemaText = model.schemaText();
        return d;
    }

    /**
     * The codec of the SOAP wire form for this interface: JAXB on the generated beans, or the
     * model-driven codec of a descriptor made with {@link #ofModel}.
     */
    public XmlCodec xmlCodec(int maxGraphNodes) {
        return xmlCodecs == null ? new XmlMessages(this, maxGraphNodes) : xmlCodecs.apply(maxGraphNodes);
    }

    /** Whether this interface was read at run time ({@link #ofModel}) rather than compiled. */
    public boolean runtimeModel() {
        return xmlCodecs != null;
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
        String s = schemaText;
        if (s == null) {
            schemaText = s = resource(schemaResource);
        }
        return s;
    }

    /** The WSDL 1.1 document the compiler derived, with a placeholder address. */
    public String wsdl() {
        String s = wsdlText;
        if (s == null) {
            wsdlText = s = resource(wsdlResource);
        }
        return s;
    }

    /**
     * The protobuf description of the bulk (gRPC) protocol the compiler derived: one service,
     * one streaming method per operation, the packed layout in its comments.
     */
    public String proto() {
        if (protoResource == null) {
            throw new IllegalStateException(name + " was compiled without a .proto");
        }
        String s = protoText;
        if (s == null) {
            protoText = s = resource(protoResource);
        }
        return s;
    }

    /** The generated codec of the packed binary format; null for descriptors made without one. */
    public BinaryCodec binaryCodec() {
        return binaryCodec;
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

    /** The element structure of the SOAP wire form, which both XML codecs read through ({@link StrictXmlReader}). */
    public StrictXmlReader.Plan xmlPlan() {
        StrictXmlReader.Plan p = xmlPlan;
        if (p == null) {
            xmlPlan = p = StrictXmlReader.Plan.of(model());   // idempotent: a race builds two equal plans
        }
        return p;
    }

    /** One JAXB context for all message classes of this interface (thread-safe, created once). */
    public JAXBContext jaxbContext() {
        JAXBContext c = jaxbContext;
        if (c == null) {
            synchronized (this) {
                if (jaxbContext == null) {
                    if (xmlCodecs != null) {
                        throw new IllegalStateException(name + " was read at run time: it has no JAXB beans");
                    }
                    Set<Class<?>> classes = new LinkedHashSet<>();
                    for (OperationDescriptor op : operations.values()) {
                        classes.add(op.requestClass());
                        if (op.responseClass() != null) {
                            classes.add(op.responseClass());
                        }
                        if (op.faultInfoClass() != null) {
                            classes.add(op.faultInfoClass());
                        }
                    }
                    try {
                        jaxbContext = JAXBContext.newInstance(classes.toArray(Class<?>[]::new));
                    } catch (JAXBException e) {
                        throw new IllegalStateException("JAXB cannot bind the messages of " + name + ": " + e, e);
                    }
                }
                c = jaxbContext;
            }
        }
        return c;
    }

    private String resource(String path) {
        if (anchor == null) {
            throw new IllegalStateException(name + " was read at run time: it has only its interface schema");
        }
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
}
