package io.switchboard.protocol.local;

import io.switchboard.testing.conformance.AbstractTraceContextTest;

/** The in-process protocol hands the operation the call's trace context too (an async call runs on another thread). */
class LocalTraceContextTest extends AbstractTraceContextTest {
    @Override
    protected String protocolName() {
        return "local";
    }
}
