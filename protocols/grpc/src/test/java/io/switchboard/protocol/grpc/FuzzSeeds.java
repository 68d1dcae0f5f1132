package io.switchboard.protocol.grpc;

import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.Divide;
import io.switchboard.testing.conformance.DivideFault;
import io.switchboard.testing.conformance.EchoDoubles;
import io.switchboard.testing.conformance.EchoList;
import io.switchboard.testing.conformance.EchoRecord;
import io.switchboard.testing.conformance.Increment;
import io.switchboard.testing.conformance.LinkEntry;
import io.switchboard.testing.conformance.Ping;
import io.switchboard.testing.conformance.Values;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes the seed inputs of {@link ProtoDecoderFuzzTest} and {@link PartFramingFuzzTest}:
 * well-formed conformance messages (edge doubles, a list with a cycle and shared nodes, full and
 * empty records, a declared fault) in each fuzz test's input layout. Not a test; run it by hand
 * with the test class path and the module's {@code src/test/resources} directory as argument.
 * Crashers that the fuzzer finds are kept beside these seeds under their own names.
 */
final class FuzzSeeds {
    private static final ProtoCodec CODEC = ConformanceComponent.DESCRIPTOR.codec(ProtoCodec.class);

    private FuzzSeeds() {
    }

    public static void main(String[] args) throws IOException {
        Path resources = Path.of(args[0], "io/switchboard/protocol/grpc");
        Path framing = resources.resolve("PartFramingFuzzTestInputs/framing");
        Files.createDirectories(framing);
        List<String> elements = ProtoDecoderFuzzTest.messages(ConformanceComponent.DESCRIPTOR);
        for (Map.Entry<String, Message> m : messages().entrySet()) {
            byte[] bytes = m.getValue().bytes();
            int op = ConformanceComponent.DESCRIPTOR.operations().indexOf(m.getValue().op);
            int selector = elements.indexOf(m.getValue().element());
            for (String target : List.of("decode", "decodeDynamic")) {
                Path decode = resources.resolve("ProtoDecoderFuzzTestInputs/" + target);
                Files.createDirectories(decode);
                Files.write(decode.resolve("seed-" + m.getKey()), concat(new byte[] {(byte) selector, (byte) 255}, bytes));
                Files.write(decode.resolve("seed-" + m.getKey() + "-pieces3"), concat(new byte[] {(byte) selector, 2}, bytes));
            }
            if (!m.getValue().response) {
                Files.write(framing.resolve("seed-" + m.getKey()), framed(op, m.getValue()));
            }
        }
    }

    /** A message of {@code op}: its request, or ({@code response}) its response or declared fault ({@code fault}). */
    private record Message(OperationDescriptor op, boolean response, Object bean, boolean fault) {
        String element() {
            return (!response ? op.requestElement() : fault ? op.faultElement() : op.responseElement()).getLocalPart();
        }

        byte[] bytes() {
            return CODEC.toBytes(element(), bean, 1000);
        }
    }

    private static Map<String, Message> messages() {
        var d = ConformanceComponent.DESCRIPTOR;
        Map<String, Message> m = new LinkedHashMap<>();
        EchoDoubles doubles = new EchoDoubles();
        doubles.setValues(Values.EDGE_DOUBLES.clone());
        m.put("echoDoubles-edges", new Message(d.operation("echoDoubles"), false, doubles, false));
        m.put("echoDoubles-null", new Message(d.operation("echoDoubles"), false, new EchoDoubles(), false));
        EchoList list = new EchoList();
        list.setHead(Values.list(3));
        m.put("echoList-3", new Message(d.operation("echoList"), false, list, false));
        EchoList cycle = new EchoList();
        LinkEntry head = Values.list(2);
        head.getNextLink().setNextLink(head);
        cycle.setHead(head);
        m.put("echoList-cycle", new Message(d.operation("echoList"), false, cycle, false));
        EchoRecord full = new EchoRecord();
        full.setRecord(Values.fullRecord());
        m.put("echoRecord-full", new Message(d.operation("echoRecord"), false, full, false));
        EchoRecord empty = new EchoRecord();
        empty.setRecord(Values.emptyRecord());
        m.put("echoRecord-empty", new Message(d.operation("echoRecord"), false, empty, false));
        m.put("ping", new Message(d.operation("ping"), false, new Ping(), false));
        Divide divide = new Divide();
        divide.setDividend(7);
        divide.setDivisor(0);
        m.put("divide", new Message(d.operation("divide"), false, divide, false));
        DivideFault fault = new DivideFault();
        fault.setReason("division by zero");
        fault.setDividend(7);
        m.put("divide-fault", new Message(d.operation("divide"), true, fault, true));
        Increment inc = new Increment();
        inc.setBy(3);
        m.put("increment", new Message(d.operation("increment"), false, inc, false));
        var resp = new io.switchboard.testing.conformance.EchoListResponse();
        resp.setHead(Values.list(2));
        m.put("echoList-response", new Message(d.operation("echoList"), true, resp, false));
        var mixed = new io.switchboard.testing.conformance.EchoMixed();
        mixed.setList(Values.mixedOfEveryKind());
        mixed.setMore(List.of(Values.nested(4)));
        m.put("echoMixed", new Message(d.operation("echoMixed"), false, mixed, false));
        return m;
    }

    /** {@link PartFramingFuzzTest}'s layout: the operation, then each part (of about 40 bytes) as a length byte and its bytes. */
    private static byte[] framed(int op, Message m) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(op);
        io.switchboard.codec.proto.ProtoCodec codec = ConformanceComponent.DESCRIPTOR.codec(
                io.switchboard.codec.proto.ProtoCodec.class);
        io.switchboard.codec.proto.ProtoCodec.Writer w = codec.writer(m.op.requestElement().getLocalPart(), m.bean, 1000);
        io.switchboard.codec.proto.ProtoOutput part = new io.switchboard.codec.proto.ProtoOutput(64);
        do {
            part.reset();
            w.writePart(part, 40);
            if (part.size() > 255) {
                break; // the layout's length byte cannot say more; the seed stops here
            }
            out.write(part.size());
            out.write(part.toByteArray());
        } while (w.hasMore());
        return out.toByteArray();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }
}
