package io.switchboard.protocol.soap;

import org.apache.axis2.AxisFault;
import org.apache.axis2.context.MessageContext;
import org.apache.axis2.receivers.AbstractMessageReceiver;

/** A one-way operation: the request is run, nothing is sent back but HTTP 202. */
final class OneWayMessageReceiver extends AbstractMessageReceiver {
    private final SkeletonMessageReceiver delegate;

    OneWayMessageReceiver(SkeletonMessageReceiver delegate) {
        this.delegate = delegate;
    }

    @Override
    protected void invokeBusinessLogic(MessageContext in) throws AxisFault {
        delegate.run(in);
    }
}
