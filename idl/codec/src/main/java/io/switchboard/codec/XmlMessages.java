package io.switchboard.codec;

import io.switchboard.idl.runtime.GraphHolder;
import io.switchboard.idl.runtime.HeterogeneousList;
import io.switchboard.idl.runtime.NdArray;
import io.switchboard.idl.runtime.GraphMessage;
import io.switchboard.idl.SecureXml;
import io.switchboard.codec.message.MessageChecks;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import jakarta.xml.bind.JAXBContext;
import jakarta.xml.bind.JAXBException;
import java.util.LinkedHashSet;
import java.util.Set;
import jakarta.xml.bind.Marshaller;
import jakarta.xml.bind.Unmarshaller;
import jakarta.xml.bind.ValidationEvent;
import java.io.StringReader;
import java.io.StringWriter;
import java.util.HashMap;
import java.util.Map;
import javax.xml.stream.XMLInputFactory;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;
import javax.xml.stream.XMLStreamWriter;

/**
 * Writes and reads generated message beans as XML with JAXB, in the wire form of the WSDL: linked
 * structures flattened into the message's node table. Strict on reading: an unknown element, a
 * dangling reference or a malformed value is an error, never a silently dropped field.
 *
 * <pre>{@code
 * XmlCodec xml = XmlCodec.of(EchoComponent.DESCRIPTOR, 2_000_000);
 * xml.write(request, xmlStreamWriter);
 * Object back = xml.read(xmlStreamReader, EchoDoubles.class);
 * }</pre>
 */
public final class XmlMessages implements XmlCodec {
    private static final XMLInputFactory INPUT = SecureXml.inputFactory();

    private final ServiceDescriptor descriptor;
    private final JAXBContext context;
    private final int maxGraphNodes;
    /** The wire schema's reading plan, found once: the lookup is a lock shared by every reader of the JVM. */
    private volatile StrictXmlReader.Plan plan;
    private volatile Map<Class<?>, String> elements;

    private XmlMessages(ServiceDescriptor descriptor, JAXBContext context, int maxGraphNodes) {
        this.descriptor = descriptor;
        this.context = context;
        this.maxGraphNodes = maxGraphNodes;
    }

    /** The codec of a generated interface's messages, with the JAXB context of its codec slot. */
    public XmlMessages(ServiceDescriptor descriptor, int maxGraphNodes) {
        this(descriptor, contextOf(descriptor), maxGraphNodes);
    }

    private static JAXBContext contextOf(ServiceDescriptor descriptor) {
        if (descriptor.codec(XmlCodec.Factory.class) instanceof JaxbFactory f) {
            return f.context(descriptor);
        }
        return jaxbContext(descriptor);
    }

    /**
     * The codec slot generated code fills: one JAXB context for all message classes of the
     * interface, made on first use (it is thread-safe and costly to make).
     */
    public static XmlCodec.Factory factory() {
        return new JaxbFactory();
    }

    private static final class JaxbFactory implements XmlCodec.Factory {
        private volatile JAXBContext context;

        JAXBContext context(ServiceDescriptor descriptor) {
            JAXBContext c = context;
            if (c == null) {
                synchronized (this) {
                    if (context == null) {
                        context = jaxbContext(descriptor);
                    }
                    c = context;
                }
            }
            return c;
        }

        @Override
        public XmlCodec create(ServiceDescriptor descriptor, int maxGraphNodes) {
            return new XmlMessages(descriptor, context(descriptor), maxGraphNodes);
        }
    }

    /** One JAXB context for all message classes of {@code descriptor}. */
    public static JAXBContext jaxbContext(ServiceDescriptor descriptor) {
        Set<Class<?>> classes = new LinkedHashSet<>();
        for (OperationDescriptor op : descriptor.operations()) {
            classes.add(op.requestClass());
            if (op.responseClass() != null) {
                classes.add(op.responseClass());
            }
            if (op.faultInfoClass() != null) {
                classes.add(op.faultInfoClass());
            }
        }
        try {
            return JAXBContext.newInstance(classes.toArray(Class<?>[]::new));
        } catch (JAXBException e) {
            throw new IllegalStateException("JAXB cannot bind the messages of " + descriptor.name() + ": " + e, e);
        }
    }

    /** Writes {@code message} (a generated request, response or fault bean) as one element, no document. */
    @Override
    public void write(Object message, XMLStreamWriter out) throws JAXBException {
        try {
            check(message);
        } catch (WireFormatException e) {
            if (WireFormatException.NODE_LIMIT.equals(e.reason())) {
                throw new Graphs.GraphLimitException(e.getMessage());   // a limit, as JAXB's walk reports it
            }
            throw new JAXBException("cannot write " + message.getClass().getSimpleName() + ": " + e.getMessage(), e);
        } catch (IllegalArgumentException | ClassCastException e) {
            throw new JAXBException("cannot write " + message.getClass().getSimpleName() + ": " + e.getMessage(), e);
        }
        Marshaller m = context.createMarshaller();
        m.setProperty(Marshaller.JAXB_FRAGMENT, Boolean.TRUE);
        m.setEventHandler(XmlMessages::failOnEvent);
        ListCheck lists = new ListCheck();
        m.setListener(lists);
        if (message instanceof GraphMessage g) {
            Graphs.Scope scope = Graphs.flatten(g, maxGraphNodes);
            try {
                m.marshal(message, out);
            } finally {
                scope.close();
            }
        } else {
            m.marshal(message, out);
        }
    }

    /** The checks every protocol makes before sending, in one place: {@link MessageChecks}. */
    @Override
    public void check(Object message) {
        MessageChecks checks = descriptor.codec(MessageChecks.class);
        if (checks != null) {   // descriptors made without them predate the checks; JAXB writes them as before
            checks.check(message, maxGraphNodes);
        }
    }

    private StrictXmlReader.Plan plan() {
        StrictXmlReader.Plan p = plan;
        return p != null ? p : (plan = StrictXmlReader.Plan.of(descriptor));
    }

    /**
     * Reads one message element of the given class from {@code in}, positioned at its start tag,
     * through a {@link StrictXmlReader}: anything the wire schema does not allow is a
     * {@link MalformedXmlException} naming the element.
     */
    @Override
    public <T> T read(XMLStreamReader in, Class<T> type) throws JAXBException {
        Unmarshaller u = context.createUnmarshaller();
        GraphCheck check = new GraphCheck(maxGraphNodes);
        u.setEventHandler(check);
        u.setListener(check);
        u.setProperty(org.glassfish.jaxb.runtime.IDResolver.class.getName(), new StrictIds());
        T value;
        try {
            StrictXmlReader checked = new StrictXmlReader(in, plan(), elementOf(type));
            check.reader = checked;
            value = u.unmarshal(checked, type).getValue();
        } catch (StrictXmlReader.Refusal e) {
            throw e.toJaxb();
        } catch (XMLStreamException e) {
            throw new JAXBException("cannot read " + type.getSimpleName() + ": " + e.getMessage(), e);
        } catch (JAXBException e) {
            StrictXmlReader.Refusal refusal = StrictXmlReader.Refusal.in(e);
            if (refusal != null) {
                throw refusal.toJaxb();
            }
            if (check.failure != null) {
                // JAXB's own complaint, with where it was: better than its exception's message
                throw new MalformedXmlException(check.failurePath, check.failure, e);
            }
            throw e;
        } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
            // JAXB's lexical converters throw these for some bad values instead of reporting an event
            // (an xsi:type whose prefix is not bound; xsi:nil="t", which DatatypeConverterImpl.
            // _parseBoolean reads past the end of): a malformed message like any other
            throw new JAXBException("cannot read " + type.getSimpleName() + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            StrictXmlReader.Refusal refusal = StrictXmlReader.Refusal.in(e);
            if (refusal != null) {
                throw refusal.toJaxb();
            }
            if (e.getCause() instanceof XMLStreamException cause) {
                // a StAX parser that reads lazily (Woodstox, which Axis2 brings) reports malformed
                // XML met inside JAXB as an unchecked wrapper of its XMLStreamException
                throw new JAXBException("cannot read " + type.getSimpleName() + ": " + cause.getMessage(), cause);
            }
            throw e;
        }
        if (check.failure != null) {
            throw new MalformedXmlException(check.failurePath, check.failure);
        }
        if (value instanceof GraphMessage g) {
            g.switchboardGraph(null);
        }
        return value;
    }

    /** The element name of a message class of this interface, for the reader to expect; null if unknown. */
    private String elementOf(Class<?> type) {
        Map<Class<?>, String> m = elements;
        if (m == null) {
            m = new HashMap<>();
            for (OperationDescriptor op : descriptor.operations()) {
                m.put(op.requestClass(), op.requestElement().getLocalPart());
                if (op.responseClass() != null) {
                    m.put(op.responseClass(), op.responseElement().getLocalPart());
                }
                if (op.faultInfoClass() != null) {
                    m.put(op.faultInfoClass(), op.faultElement().getLocalPart());
                }
            }
            elements = m;
        }
        return m.get(type);
    }

    /**
     * Refuses, while a message is written, a heterogeneous list that holds a null or an element of
     * a class none of its alternatives has (JAXB would drop or mangle it silently) or nests deeper than {@link HeterogeneousList#MAX_DEPTH} (a list that holds
     * itself would never end).
     */
    private static final class ListCheck extends Marshaller.Listener {
        private int depth;

        @Override
        public void beforeMarshal(Object source) {
            if (source instanceof HeterogeneousList list) {
                if (++depth > HeterogeneousList.MAX_DEPTH) {
                    throw new IllegalArgumentException("heterogeneous list " + source.getClass().getSimpleName()
                            + " nests deeper than " + HeterogeneousList.MAX_DEPTH + " levels");
                }
                String problem = list.problem();
                if (problem != null) {
                    throw new IllegalArgumentException(problem);
                }
            }
        }

        @Override
        public void afterMarshal(Object source) {
            if (source instanceof HeterogeneousList) {
                depth--;
            }
        }
    }

    /** Convenience for tests and tools: the message as an XML string. */
    public String toXml(Object message) throws JAXBException {
        StringWriter w = new StringWriter();
        try {
            XMLStreamWriter out = javax.xml.stream.XMLOutputFactory.newFactory().createXMLStreamWriter(w);
            write(message, out);
            out.flush();
        } catch (XMLStreamException e) {
            throw new JAXBException(e);
        }
        return w.toString();
    }

    /** Convenience for tests and tools: reads a message from an XML string, DTDs refused. */
    public <T> T fromXml(String xml, Class<T> type) throws JAXBException {
        try {
            XMLStreamReader in = INPUT.createXMLStreamReader(new StringReader(xml));
            in.nextTag();
            return read(in, type);
        } catch (XMLStreamException e) {
            throw new JAXBException(e.getMessage(), e);
        }
    }

    private static boolean failOnEvent(ValidationEvent event) {
        return false;
    }

    /** Node ids as JAXB resolves them, but a repeated id is an error (JAXB's own resolver lets the last one win). */
    private static final class StrictIds extends org.glassfish.jaxb.runtime.IDResolver {
        private final java.util.HashMap<String, Object> nodes = new java.util.HashMap<>();

        @Override
        public void bind(String id, Object node) throws org.xml.sax.SAXException {
            if (nodes.putIfAbsent(id, node) != null) {
                throw new org.xml.sax.SAXException("node id '" + id + "' appears twice");
            }
        }

        @Override
        public java.util.concurrent.Callable<?> resolve(String id, @SuppressWarnings("rawtypes") Class type) {
            return () -> nodes.get(id);
        }
    }

    /** A message whose heterogeneous lists nest deeper than the limit; a refusal like a malformed message. */
    public static final class ListDepthException extends RuntimeException {
        public ListDepthException(String message) {
            super(message);
        }
    }

    /** Turns every JAXB warning into an error and counts linked nodes as they are read. */
    private static final class GraphCheck extends Unmarshaller.Listener implements jakarta.xml.bind.ValidationEventHandler {
        private final int maxNodes;
        private int nodes;
        private int listDepth;
        private String failure;
        private String failurePath;
        private StrictXmlReader reader;

        GraphCheck(int maxNodes) {
            this.maxNodes = maxNodes;
        }

        @Override
        public boolean handleEvent(ValidationEvent event) {
            if (failure == null) {
                failure = event.getMessage() + (event.getLocator() != null && event.getLocator().getLineNumber() > 0
                        ? " (line " + event.getLocator().getLineNumber() + ")" : "");
                failurePath = reader != null ? reader.path() : "(message)";
            }
            return false;
        }

        @Override
        public void afterUnmarshal(Object target, Object parent) {
            if (target instanceof HeterogeneousList list) {
                listDepth--;
                if (failure == null && list.problem() != null) {
                    failure = list.problem();   // an alternative marked xsi:nil, say
                    failurePath = reader != null ? reader.path() : "(message)";
                }
            }
            if (target instanceof NdArray array && failure == null) {
                String problem = NdArrays.inconsistency(array);
                if (problem != null) {
                    failure = "n-d array " + target.getClass().getSimpleName() + ": " + problem;
                    failurePath = reader != null ? reader.path() : "(message)";
                }
            }
        }

        @Override
        public void beforeUnmarshal(Object target, Object parent) {
            if (target instanceof HeterogeneousList && ++listDepth > HeterogeneousList.MAX_DEPTH) {
                // JAXB keeps its own stack, but a bound keeps hostile nesting from costing without end
                throw new ListDepthException("heterogeneous lists nested deeper than the limit of "
                        + HeterogeneousList.MAX_DEPTH + " levels");
            }
            if (target instanceof GraphHolder && !(target instanceof GraphMessage) && ++nodes > maxNodes) {
                throw new Graphs.GraphLimitException("message holds more than " + maxNodes + " linked nodes");
            }
        }
    }
}
