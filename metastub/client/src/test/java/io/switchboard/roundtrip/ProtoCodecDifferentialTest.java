package io.switchboard.roundtrip;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.fail;

import io.switchboard.codec.dynamic.DynamicInterface;
import io.switchboard.codec.dynamic.DynamicRecord;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.idl.runtime.HeterogeneousList;
import io.switchboard.testing.ProtoParts;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

/**
 * The generated and the dynamic protobuf codec against each other, on interfaces made at random
 * (compiled at test time, as for {@link RoundTripPropertiesTest}) and random values of them: NaN,
 * -0.0, infinities, empty and null arrays, null elements, nested structs and lists, date-times,
 * linked nodes with cycles and sharing, and values no protocol may carry. Both codecs read and
 * write through the same core ({@code ProtoWriteState}, {@code ProtoReadState}, {@code ProtoArrays},
 * {@code ProtoNulls}); these properties hold them to one meaning of every message:
 * <ul>
 *   <li>a value is written to the same bytes by both, or refused by both alike (the same exception
 *       class, {@link WireFormatException#reason() reason} and {@link WireFormatException#field()
 *       field});</li>
 *   <li>the parts either writes, cut at any target size, are read by the other's reader to the
 *       value written;</li>
 *   <li>malformed bytes (cut short, a bit flipped, a field appended with a wrong wire type, a
 *       second occurrence of a field, a length past the end, limits lower than the message needs)
 *       are read by both to the same value, or refused by both alike.</li>
 * </ul>
 * Seed and tries: {@link PropertySettings}; the schemas come from the same seed.
 */
@AddLifecycleHook(PropertySettings.class)
class ProtoCodecDifferentialTest {
    private static final int SCHEMAS = 8;
    private static final int MAX_NODES = 10_000;
    private static final MessageLimits LIMITS = MessageLimits.of(1 << 20, MAX_NODES);

    private static Path dir;
    private static CompiledInterfaces compiled;
    private static final List<Iface> IFACES = new ArrayList<>();
    private static long schemaSeed;

    /** One random interface, with its generated and its dynamic codec. */
    static final class Iface {
        RandomSchemas.Schema schema;
        ProtoCodec generated;
        ProtoCodec dynamic;
        Beans beans;
        Arbitrary<Case> cases;
    }

    /** One try: an interface and a request message of its {@code echo}. */
    record Case(Iface iface, DynamicRecord request) {
        @Override
        public String toString() {
            return Canon.describe(iface.schema, schemaSeed, request);
        }
    }

    @BeforeContainer
    static void start() throws Exception {
        String seed = PropertySettings.seed();
        // not the schemas of the round-trip properties: more shapes between the two
        schemaSeed = seed != null ? Long.parseLong(seed) + 1 : new Random().nextLong();
        System.out.println("protobuf codec differential: schemas from seed " + schemaSeed);
        List<RandomSchemas.Schema> schemas = RandomSchemas.make(schemaSeed, SCHEMAS);
        dir = Files.createTempDirectory("proto-differential");
        compiled = CompiledInterfaces.compile(schemas, dir);
        for (RandomSchemas.Schema s : schemas) {
            Iface i = new Iface();
            i.schema = s;
            i.generated = compiled.descriptor(s).codec(ProtoCodec.class);
            DynamicInterface dynamic = DynamicInterface.fromSchema(s.xsd());
            i.dynamic = dynamic.descriptor().codec(ProtoCodec.class);
            i.beans = new Beans(dynamic, compiled, s);
            i.cases = new MessageValues(dynamic).request("echo").map(r -> new Case(i, r));
            IFACES.add(i);
        }
    }

    @AfterContainer
    static void stop() throws Exception {
        CompiledInterfaces.closeAndDelete(compiled, dir);
    }

    /**
     * Random messages. jqwik's edge cases are off in every property here: those of a message of a
     * random schema combine past any heap; the values' own generators reach the corners (NaN, -0.0,
     * empty and null arrays) often enough, as the statistics show.
     */
    @Provide
    Arbitrary<Case> messages() {
        return Arbitraries.oneOf(IFACES.stream().map(i -> i.cases).toList());
    }

    // ---- writing

    @Property(tries = 400, edgeCases = EdgeCasesMode.NONE)
    void bothWriteTheSameBytesOrRefuseAlike(@ForAll("messages") Case c) {
        Iface i = c.iface();
        Outcome<byte[]> generated = Outcome.of(() -> i.generated.toBytes("echo", i.beans.toBean(c.request()), MAX_NODES));
        Outcome<byte[]> dynamic = Outcome.of(() -> i.dynamic.toBytes("echo", c.request(), MAX_NODES));
        Statistics.label("written").collect(generated.refused() ? "refused" : "written");
        Statistics.label("written").coverage(k -> {
            k.check("written").percentage(p -> p >= 50);
            k.check("refused").percentage(p -> p >= 2);
        });
        sameRefusal("writing", generated, dynamic);
        if (generated.refused()) {
            return;
        }
        assertArrayEquals(generated.value(), dynamic.value(), "the generated and the dynamic codec write other bytes");
        DynamicRecord back = readBoth(i, generated.value(), LIMITS);
        assertNull(back == null ? "refused" : Same.difference(c.request(), back), "a written message reads back changed");
    }

    @Property(tries = 300, edgeCases = EdgeCasesMode.NONE)
    void partsOfEitherWriterReadBackThroughTheOthersReader(@ForAll("messages") Case c,
            @ForAll @IntRange(min = 1, max = 256) int target) {
        Iface i = c.iface();
        Object bean = i.beans.toBean(c.request());
        Outcome<List<byte[]>> generated = Outcome.of(() -> ProtoParts.of(i.generated.writer("echo", bean, MAX_NODES), target));
        Outcome<List<byte[]>> dynamic = Outcome.of(() -> ProtoParts.of(i.dynamic.writer("echo", c.request(), MAX_NODES), target));
        sameRefusal("writing in parts", generated, dynamic);
        if (generated.refused()) {
            return;
        }
        Statistics.label("parts").collect(generated.value().size() == 1 ? "one" : "several");
        Statistics.label("parts").coverage(k -> k.check("several").percentage(p -> p >= 20));
        String difference = Same.difference(c.request(), i.beans.fromBean(readParts(i.generated, dynamic.value())));
        assertNull(difference, "the dynamic writer's parts, read by the generated reader: " + difference);
        difference = Same.difference(c.request(), (DynamicRecord) readParts(i.dynamic, generated.value()));
        assertNull(difference, "the generated writer's parts, read by the dynamic reader: " + difference);
    }

    private static Object readParts(ProtoCodec codec, List<byte[]> parts) {
        ProtoCodec.Reader r = codec.reader("echo", LIMITS, -1);
        for (byte[] part : parts) {
            r.readPart(part, 0, part.length);
        }
        return r.finish();
    }

    // ---- reading malformed bytes

    /** What is done to a valid message before both readers get it. */
    enum Mutation {
        TRUNCATE, FLIP_BIT, WRONG_WIRE_TYPE, REPEAT_FIELD, LENGTH_PAST_END, LOW_LIMITS
    }

    @Property(tries = 1000, edgeCases = EdgeCasesMode.NONE)
    void malformedBytesAreReadAlikeOrRefusedAlike(@ForAll("messages") Case c, @ForAll Mutation mutation,
            @ForAll @IntRange(min = 0, max = 1 << 20) int where, @ForAll @IntRange(min = 0, max = 255) int what) {
        Iface i = c.iface();
        byte[] bytes;
        try {
            bytes = i.dynamic.toBytes("echo", c.request(), MAX_NODES);
        } catch (WireFormatException e) {
            return;   // a value no protocol may carry: the writing property covers it
        }
        MessageLimits limits = LIMITS;
        int fields = c.request().type().model().fields().size();
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(bytes);
        switch (mutation) {
            case TRUNCATE -> bytes = Arrays.copyOf(bytes, bytes.length == 0 ? 0 : where % bytes.length);
            case FLIP_BIT -> {
                if (bytes.length > 0) {
                    bytes[where % bytes.length] ^= (byte) (1 << (what & 7));
                }
            }
            case WRONG_WIRE_TYPE -> {
                // a known field of the message (or its node table or null list) with any wire type
                int number = switch (what % 4) {
                    case 0 -> 2046;
                    case 1 -> 2047;
                    default -> 1 + where % Math.max(1, fields);
                };
                int wireType = new int[] {0, 1, 2, 5}[(what >> 2) & 3];
                writeVarint(b, number << 3 | wireType);
                switch (wireType) {
                    case 0 -> writeVarint(b, where & 0x3fff);
                    case 1 -> b.writeBytes(new byte[8]);
                    case 5 -> b.writeBytes(new byte[4]);
                    default -> {
                        byte[] body = Arrays.copyOfRange(bytes, 0, Math.min(bytes.length, what % 16));
                        writeVarint(b, body.length);
                        b.writeBytes(body);
                    }
                }
                bytes = b.toByteArray();
            }
            case REPEAT_FIELD -> {
                // the message followed by a piece of itself: protobuf's merge of a second occurrence
                int from = bytes.length == 0 ? 0 : where % bytes.length;
                b.write(bytes, from, bytes.length - from);
                bytes = b.toByteArray();
            }
            case LENGTH_PAST_END -> {
                writeVarint(b, (1 + where % Math.max(1, fields)) << 3 | 2);
                writeVarint(b, what % 2 == 0 ? Integer.MAX_VALUE : 1 + what);
                bytes = b.toByteArray();
            }
            case LOW_LIMITS -> limits = new MessageLimits(1 + where % Math.max(1, bytes.length + 1), what % 4,
                    what % 32, what % (HeterogeneousList.MAX_DEPTH + 1));
        }
        DynamicRecord back = readBoth(i, bytes, limits);
        Statistics.label(mutation.name()).collect(back == null ? "refused" : "read");
    }

    private static void writeVarint(ByteArrayOutputStream b, long v) {
        while ((v & ~0x7FL) != 0) {
            b.write((int) (v & 0x7F) | 0x80);
            v >>>= 7;
        }
        b.write((int) v);
    }

    /** Both readers: the same value (returned), or the same refusal (null); anything else fails. */
    private static DynamicRecord readBoth(Iface i, byte[] bytes, MessageLimits limits) {
        Outcome<Object> generated = Outcome.of(() -> i.generated.fromBytes("echo", bytes, limits));
        Outcome<Object> dynamic = Outcome.of(() -> i.dynamic.fromBytes("echo", bytes, limits));
        sameRefusal("reading " + hex(bytes) + " with " + limits, generated, dynamic);
        if (generated.refused()) {
            return null;
        }
        DynamicRecord g = i.beans.fromBean(generated.value());
        String difference = Same.difference(g, (DynamicRecord) dynamic.value());
        assertNull(difference, "the generated and the dynamic reader read " + hex(bytes) + " to different values: "
                + difference);
        return g;
    }

    /** Both succeeded, or both refused with the same exception class, reason and field. */
    private static void sameRefusal(String what, Outcome<?> generated, Outcome<?> dynamic) {
        if (generated.refused() != dynamic.refused()) {
            fail(what + ": generated " + generated + ", dynamic " + dynamic);
        }
        if (!generated.refused()) {
            return;
        }
        RuntimeException g = generated.refusal();
        RuntimeException d = dynamic.refusal();
        assertEquals(g.getClass(), d.getClass(), what + ": generated " + generated + ", dynamic " + dynamic);
        if (g instanceof WireFormatException gw && d instanceof WireFormatException dw) {
            assertEquals(gw.reason(), dw.reason(), what + ": generated " + generated + ", dynamic " + dynamic);
            assertEquals(gw.field(), dw.field(), what + ": generated " + generated + ", dynamic " + dynamic);
        }
    }

    private static String hex(byte[] bytes) {
        StringBuilder s = new StringBuilder();
        for (int k = 0; k < Math.min(bytes.length, 256); k++) {
            s.append(String.format("%02x", bytes[k]));
        }
        return s.append(bytes.length > 256 ? "..." : "").toString();
    }

    /**
     * A value, or the refusal the codecs document: a {@link WireFormatException}, or an
     * {@link IllegalArgumentException} for a value of the wrong Java type. Any other exception is
     * a bug in the codec and fails the property at once.
     */
    record Outcome<T>(T value, RuntimeException refusal) {
        static <T> Outcome<T> of(Supplier<T> action) {
            try {
                return new Outcome<>(action.get(), null);
            } catch (WireFormatException | IllegalArgumentException e) {
                return new Outcome<>(null, e);
            }
        }

        boolean refused() {
            return refusal != null;
        }

        @Override
        public String toString() {
            return refusal == null ? "succeeded" : "refused (" + refusal + ")";
        }
    }
}
