package io.switchboard.server.authz;

/** gRPC: a certificate, a token or nobody, allowed and denied by the policy. */
class GrpcAuthorizationTest extends AuthorizationMatrix {
    @Override
    protected String protocolName() {
        return "grpc";
    }
}
