package io.switchboard.server.authz;

/** SOAP: a certificate, a token or nobody, allowed and denied by the policy. */
class SoapAuthorizationTest extends AuthorizationMatrix {
    @Override
    protected String protocolName() {
        return "soap";
    }
}
