package io.switchboard.protocol.grpc;

import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import io.grpc.protobuf.ProtoFileDescriptorSupplier;
import io.grpc.protobuf.ProtoServiceDescriptorSupplier;

/**
 * The schema a component's gRPC service carries, so that server reflection
 * ({@code ProtoReflectionServiceV1}) can answer for it: the component's {@code .proto} as a
 * descriptor built in Java.
 */
final class ReflectionSchema implements ProtoFileDescriptorSupplier, ProtoServiceDescriptorSupplier {
    private final FileDescriptor file;
    private final String serviceName;

    ReflectionSchema(FileDescriptor file, String serviceName) {
        this.file = file;
        this.serviceName = serviceName;
    }

    @Override
    public FileDescriptor getFileDescriptor() {
        return file;
    }

    @Override
    public ServiceDescriptor getServiceDescriptor() {
        return file.findServiceByName(serviceName);
    }
}
