package io.switchboard.protocol.soap;

import io.switchboard.codec.XmlCodec;
import io.switchboard.protocol.spi.PhaseMarks;
import jakarta.xml.bind.JAXBException;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamWriter;
import org.apache.axiom.om.ds.AbstractPushOMDataSource;

/**
 * A message bean as an Axiom data source: written straight to the output stream when Axis2
 * serializes the envelope, in the wire form of the interface's {@link XmlCodec} (linked structures flat).
 */
final class MessageDataSource extends AbstractPushOMDataSource {
    private final XmlCodec xml;
    private final Object message;
    private volatile boolean written;

    MessageDataSource(XmlCodec xml, Object message) {
        this.xml = xml;
        this.message = message;
    }

    /** Whether the message was ever written whole; if not, no server can have read all of it. */
    boolean writtenWhole() {
        return written;
    }

    @Override
    public boolean isDestructiveWrite() {
        return false;
    }

    @Override
    public void serialize(XMLStreamWriter writer) throws XMLStreamException {
        try {
            PhaseMarks.mark(PhaseMarks.Phase.ENCODE_START);
            xml.write(message, writer);
            PhaseMarks.mark(PhaseMarks.Phase.ENCODE_END);
            written = true;
        } catch (JAXBException e) {
            throw new XMLStreamException("cannot write " + message.getClass().getSimpleName() + ": "
                    + SoapFaults.rootMessage(e), e);
        }
    }
}
