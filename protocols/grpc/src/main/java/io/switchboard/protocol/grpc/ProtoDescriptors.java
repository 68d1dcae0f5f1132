package io.switchboard.protocol.grpc;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.OneofDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import com.google.protobuf.Descriptors.DescriptorValidationException;
import com.google.protobuf.Descriptors.FileDescriptor;
import io.switchboard.codec.proto.ProtoFile;
import io.switchboard.codec.proto.ProtoFile.Field;
import io.switchboard.codec.proto.ProtoFile.Label;
import io.switchboard.codec.proto.ProtoFile.Message;
import io.switchboard.codec.proto.ProtoFile.Method;
import java.util.HashSet;
import java.util.Set;

/**
 * Protobuf descriptors of a {@link ProtoFile}, built in Java (no protoc at run time) the way protoc
 * builds them from the file's text: fully qualified type names, proto3 {@code optional} as a
 * synthetic oneof, JSON names. Server reflection answers with them.
 */
final class ProtoDescriptors {
    private ProtoDescriptors() {
    }

    /** The validated descriptor of {@code file}; it imports nothing. */
    static FileDescriptor build(ProtoFile file) {
        try {
            return FileDescriptor.buildFrom(toProto(file), new FileDescriptor[0]);
        } catch (DescriptorValidationException e) {
            throw new IllegalStateException("the .proto of " + file.service().name() + " is not valid protobuf: "
                    + e.getMessage(), e);
        }
    }

    /** The file as protoc's {@code --descriptor_set_out} would hold it (without comments). */
    static FileDescriptorProto toProto(ProtoFile file) {
        String scope = "." + file.packageName() + ".";
        FileDescriptorProto.Builder b = FileDescriptorProto.newBuilder()
                .setName(file.fileName()).setPackage(file.packageName()).setSyntax("proto3");
        for (Message m : file.messages()) {
            b.addMessageType(message(m, scope));
        }
        ServiceDescriptorProto.Builder service = ServiceDescriptorProto.newBuilder().setName(file.service().name());
        for (Method m : file.service().methods()) {
            MethodDescriptorProto.Builder method = MethodDescriptorProto.newBuilder().setName(m.name())
                    .setInputType(scope + m.inputType()).setOutputType(scope + m.outputType());
            // protoc sets the streaming flags only where the text says `stream`
            if (m.clientStreaming()) {
                method.setClientStreaming(true);
            }
            if (m.serverStreaming()) {
                method.setServerStreaming(true);
            }
            service.addMethod(method);
        }
        return b.addService(service).build();
    }

    private static DescriptorProto message(Message m, String scope) {
        DescriptorProto.Builder b = DescriptorProto.newBuilder().setName(m.name());
        for (String oneof : m.oneofs()) {
            b.addOneofDecl(OneofDescriptorProto.newBuilder().setName(oneof));
        }
        // proto3 `optional` is a oneof of one field, named as protoc names it, after the real ones
        Set<String> oneofNames = new HashSet<>(m.oneofs());
        for (Field f : m.fields()) {
            FieldDescriptorProto.Builder field = FieldDescriptorProto.newBuilder()
                    .setName(f.name()).setNumber(f.number()).setJsonName(jsonName(f.name()))
                    .setLabel(f.label() == Label.REPEATED ? FieldDescriptorProto.Label.LABEL_REPEATED
                            : FieldDescriptorProto.Label.LABEL_OPTIONAL)
                    .setType(FieldDescriptorProto.Type.valueOf("TYPE_" + f.type().name()));
            if (f.messageType() != null) {
                field.setTypeName(scope + f.messageType());
            }
            if (f.oneof() >= 0) {
                field.setOneofIndex(f.oneof());
            } else if (f.label() == Label.OPTIONAL) {
                String synthetic = "_" + f.name();
                while (!oneofNames.add(synthetic)) {
                    synthetic = "X" + synthetic;
                }
                field.setProto3Optional(true).setOneofIndex(b.getOneofDeclCount());
                b.addOneofDecl(OneofDescriptorProto.newBuilder().setName(synthetic));
            }
            b.addField(field);
        }
        for (Message nested : m.nested()) {
            b.addNestedType(message(nested, scope)); // type names are package-relative at any depth
        }
        return b.build();
    }

    /** protoc's JSON name: underscores dropped, the letter after one upper-cased. */
    static String jsonName(String name) {
        StringBuilder s = new StringBuilder(name.length());
        boolean upper = false;
        for (char c : name.toCharArray()) {
            if (c == '_') {
                upper = true;
            } else {
                s.append(upper ? Character.toUpperCase(c) : c);
                upper = false;
            }
        }
        return s.toString();
    }
}
