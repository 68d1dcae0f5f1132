package io.switchboard.codec.proto;

import io.switchboard.codec.proto.ProtoFile.Field;
import io.switchboard.codec.proto.ProtoFile.Label;
import io.switchboard.codec.proto.ProtoFile.Message;
import io.switchboard.codec.proto.ProtoFile.Method;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

/** Prints a {@link ProtoFile} as {@code .proto} text that protoc reads back into the same descriptors. */
public final class ProtoText {
    private final ProtoFile file;
    private final StringBuilder out = new StringBuilder();
    /** The messages around the one being printed, innermost first: they decide how a type name resolves. */
    private final Deque<Message> enclosing = new ArrayDeque<>();

    private ProtoText(ProtoFile file) {
        this.file = file;
    }

    /** The file's text; {@code generatedBy} is the first comment line (what wrote it, from what). */
    public static String write(ProtoFile file, String generatedBy) {
        return new ProtoText(file).print(generatedBy);
    }

    private String print(String generatedBy) {
        comment(0, List.of(generatedBy, ""));
        comment(0, file.header());
        out.append("\nsyntax = \"proto3\";\n\npackage ").append(file.packageName()).append(";\n");
        for (Message m : file.messages()) {
            out.append('\n');
            message(0, m);
        }
        out.append('\n');
        comment(0, file.service().comment());
        out.append("service ").append(file.service().name()).append(" {\n");
        for (Method m : file.service().methods()) {
            comment(2, m.comment());
            out.append("  rpc ").append(m.name()).append('(').append(m.clientStreaming() ? "stream " : "")
                    .append(methodType(m.inputType())).append(") returns (").append(m.serverStreaming() ? "stream " : "")
                    .append(methodType(m.outputType())).append(");\n");
        }
        out.append("}\n");
        return out.toString();
    }

    private void message(int indent, Message m) {
        comment(indent, m.comment());
        String pad = " ".repeat(indent);
        out.append(pad).append("message ").append(m.name()).append(" {\n");
        enclosing.push(m);
        int openOneof = -1;
        for (Field f : m.fields()) {
            if (f.oneof() != openOneof) {
                if (openOneof >= 0) {
                    out.append(pad).append("  }\n");
                }
                if (f.oneof() >= 0) {
                    out.append(pad).append("  oneof ").append(m.oneofs().get(f.oneof())).append(" {\n");
                }
                openOneof = f.oneof();
            }
            int fieldIndent = indent + (openOneof >= 0 ? 4 : 2);
            comment(fieldIndent, f.comment());
            out.append(" ".repeat(fieldIndent))
                    .append(f.label() == Label.OPTIONAL ? "optional " : f.label() == Label.REPEATED ? "repeated " : "")
                    .append(f.messageType() != null ? typeName(f.messageType()) : f.type().keyword())
                    .append(' ').append(f.name()).append(" = ").append(f.number()).append(";\n");
        }
        if (openOneof >= 0) {
            out.append(pad).append("  }\n");
        }
        for (Message nested : m.nested()) {
            message(indent + 2, nested);
        }
        enclosing.pop();
        out.append(pad).append("}\n");
    }

    /**
     * A type name as written in a field: relative to the package, unless a nested message of an
     * enclosing one has the name's first part (protoc would find that one first), then fully qualified.
     */
    private String typeName(String packageRelative) {
        String first = packageRelative.split("\\.", 2)[0];
        for (Message m : enclosing) {
            if (m.nested().stream().anyMatch(n -> n.name().equals(first))) {
                return "." + file.packageName() + "." + packageRelative;
            }
        }
        return packageRelative;
    }

    /**
     * A message name in an rpc line: inside the service a method's name hides a message of the same
     * name (a request message is named after its operation), so such names are fully qualified.
     */
    private String methodType(String packageRelative) {
        String first = packageRelative.split("\\.", 2)[0];
        return file.service().methods().stream().anyMatch(m -> m.name().equals(first))
                ? "." + file.packageName() + "." + packageRelative : packageRelative;
    }

    private void comment(int indent, List<String> lines) {
        for (String line : lines) {
            out.append(" ".repeat(indent)).append(line.isEmpty() ? "//" : "// " + line).append('\n');
        }
    }
}
