package io.switchboard.codec;

import io.switchboard.idl.runtime.ServiceDescriptor;
import jakarta.xml.bind.JAXBException;
import javax.xml.stream.XMLStreamReader;
import javax.xml.stream.XMLStreamWriter;

/**
 * Writes and reads the messages of one interface in the SOAP wire form (see docs/wire-forms.md, "The SOAP
 * wire form"). Transports get one from {@link #of}, out of the descriptor's codec slot: for generated code
 * it is {@link XmlMessages} (JAXB on the generated beans), for an interface read at run time the
 * model-driven {@code io.switchboard.codec.dynamic.DynamicXml}; both write the same bytes.
 *
 * <pre>{@code
 * XmlCodec xml = XmlCodec.of(descriptor, 2_000_000);
 * xml.write(request, xmlStreamWriter);
 * Object back = xml.read(xmlStreamReader, operation.responseClass());
 * }</pre>
 */
public interface XmlCodec {
    /**
     * Writes {@code message} (a request, response or fault) as one element, no document. A message
     * that {@link #check} refuses is refused before anything is written.
     */
    void write(Object message, XMLStreamWriter out) throws JAXBException;

    /**
     * Refuses {@code message} as writing it would, without writing: a transport calls it before it
     * sends a byte, so a value no protocol can carry (a lone surrogate, a required field that is
     * null, a date-time {@code xs:dateTime} cannot say) is refused on every protocol alike, with
     * the field's name.
     *
     * @throws io.switchboard.codec.message.WireFormatException the refusal, naming the field
     */
    void check(Object message);

    /**
     * Reads one message element from {@code in}, positioned at its start tag. Generated codecs know
     * the message by {@code type}; model-driven ones by the element's name.
     *
     * @throws JAXBException a malformed message, named
     */
    <T> T read(XMLStreamReader in, Class<T> type) throws JAXBException;

    /**
     * The XML codec of {@code descriptor}'s messages, refusing graphs of more than {@code
     * maxGraphNodes} nodes.
     *
     * @throws IllegalStateException the descriptor was built without an XML codec
     */
    static XmlCodec of(ServiceDescriptor descriptor, int maxGraphNodes) {
        Factory factory = descriptor.codec(Factory.class);
        if (factory == null) {
            throw new IllegalStateException(descriptor.name() + " was compiled without an XML codec");
        }
        return factory.create(descriptor, maxGraphNodes);
    }

    /** The codec slot's content: makes codecs with a node limit of the caller's. */
    @FunctionalInterface
    interface Factory {
        XmlCodec create(ServiceDescriptor descriptor, int maxGraphNodes);
    }
}
