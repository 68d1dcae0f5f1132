package io.switchboard.codec.proto;

import java.util.List;
import java.util.Objects;

/**
 * A {@code .proto} file as data: what the interface compiler prints as text and what the gRPC
 * protocol turns into protobuf descriptors for server reflection. Both come from this one value,
 * so the published text and the descriptors a client gets by reflection cannot disagree.
 *
 * <p>It holds only what Switchboard's files use: proto3, one package, no imports, messages (with
 * nested messages and oneofs) and one service.
 *
 * @param fileName    the file's name, as reflection reports it ({@code Echo.proto})
 * @param packageName the protobuf package ({@code switchboard.echo})
 * @param header      comment lines printed at the top of the file
 * @param messages    top-level messages, in the order they are printed
 * @param service     the component's service
 */
public record ProtoFile(String fileName, String packageName, List<String> header, List<Message> messages,
                        Service service) {

    public ProtoFile {
        Objects.requireNonNull(fileName, "fileName");
        Objects.requireNonNull(packageName, "packageName");
        header = List.copyOf(header);
        messages = List.copyOf(messages);
        Objects.requireNonNull(service, "service");
    }

    /** The scalar and message types of protobuf fields that Switchboard's files use. */
    public enum Type {
        DOUBLE, FLOAT, INT64, UINT64, INT32, UINT32, SFIXED32, SFIXED64, BOOL, STRING, BYTES, MESSAGE;

        /** The keyword in {@code .proto} text. */
        public String keyword() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** How a field holds its value: proto3's implicit presence, {@code optional} or {@code repeated}. */
    public enum Label {
        /** proto3 default: the type's zero value is not sent and reads back as zero. */
        IMPLICIT,
        /** explicit presence: absent and zero differ. */
        OPTIONAL,
        /** a list; numbers are packed. */
        REPEATED
    }

    /**
     * One field.
     *
     * @param messageType for {@link Type#MESSAGE}: the message's name within the package, dotted for
     *                    nested messages ({@code Mixed.Element}); null otherwise
     * @param oneof       index into the enclosing message's {@link Message#oneofs()}, or -1
     */
    public record Field(String name, int number, Type type, String messageType, Label label, int oneof,
                        List<String> comment) {
        public Field {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(type, "type");
            Objects.requireNonNull(label, "label");
            if ((type == Type.MESSAGE) != (messageType != null)) {
                throw new IllegalArgumentException(name + ": a message type needs its name, other types none");
            }
            if (oneof >= 0 && label != Label.IMPLICIT) {
                throw new IllegalArgumentException(name + ": a oneof member is neither optional nor repeated");
            }
            comment = List.copyOf(comment);
        }

        public static Field of(String name, int number, Type type, Label label, String... comment) {
            return new Field(name, number, type, null, label, -1, List.of(comment));
        }

        public static Field message(String name, int number, String messageType, Label label, String... comment) {
            return new Field(name, number, Type.MESSAGE, messageType, label, -1, List.of(comment));
        }

        Field inOneof(int index) {
            return new Field(name, number, type, messageType, label, index, comment);
        }
    }

    /** A message; {@code nested} messages are declared inside it. */
    public record Message(String name, List<String> comment, List<Field> fields, List<String> oneofs,
                          List<Message> nested) {
        public Message {
            Objects.requireNonNull(name, "name");
            comment = List.copyOf(comment);
            fields = List.copyOf(fields);
            oneofs = List.copyOf(oneofs);
            nested = List.copyOf(nested);
        }

        public Message(String name, List<String> comment, List<Field> fields) {
            this(name, comment, fields, List.of(), List.of());
        }

        /** A message whose fields are all members of one oneof. */
        public static Message oneof(String name, List<String> comment, String oneofName, List<Field> members) {
            return new Message(name, comment, members.stream().map(f -> f.inOneof(0)).toList(),
                    List.of(oneofName), List.of());
        }
    }

    /** One rpc; the types are message names within the package. */
    public record Method(String name, List<String> comment, String inputType, String outputType,
                         boolean clientStreaming, boolean serverStreaming) {
        public Method {
            Objects.requireNonNull(name, "name");
            comment = List.copyOf(comment);
        }
    }

    public record Service(String name, List<String> comment, List<Method> methods) {
        public Service {
            Objects.requireNonNull(name, "name");
            comment = List.copyOf(comment);
            methods = List.copyOf(methods);
        }
    }
}
