package io.switchboard.idl.runtime;

import java.util.List;

/**
 * A generated request, response or fault message that carries linked structures. On the SOAP wire
 * all nodes travel flat in the message's {@code sb-graph} element and refer to each other by id.
 */
public interface GraphMessage extends GraphHolder {
    void switchboardGraph(List<Object> nodes);
}
