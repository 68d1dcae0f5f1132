package io.switchboard.codec;

import jakarta.xml.bind.JAXBException;

/**
 * A SOAP message refused by a reader because it does not match the wire schema: a value outside
 * its type's range or lexical space, a required field missing, nil where the field is not
 * nillable, an unknown, repeated or misplaced element, a lone surrogate. {@link #path()} names
 * the element, as a path from the message element ({@code echoList/sb-graph/LinkEntry[2]/iint}).
 */
public class MalformedXmlException extends JAXBException {
    private final String path;
    private final String problem;

    public MalformedXmlException(String path, String problem) {
        super("field " + path + ": " + problem);
        this.path = path;
        this.problem = problem;
    }

    public MalformedXmlException(String path, String problem, Throwable cause) {
        super("field " + path + ": " + problem, cause);
        this.path = path;
        this.problem = problem;
    }

    /** The element at fault, slash-separated from the message element; {@code [n]} counts repeated siblings from 1. */
    public String path() {
        return path;
    }

    /** What is wrong with it, without the path. */
    public String problem() {
        return problem;
    }
}
