package io.switchboard.registry.server;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.switchboard.codec.Graphs;
import io.switchboard.codec.XmlMessages;
import io.switchboard.registry.CallSummary;
import io.switchboard.registry.wire.RegistryComponent;
import io.switchboard.registry.wire.RenewWithStats;
import io.switchboard.testing.DecoderCheck;
import jakarta.xml.bind.JAXBException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * Fuzzes what the registry does with the body of a {@code renewWithStats} request: the SOAP message
 * read by {@link XmlMessages}, then the figures checked by {@link CallSummary#fromWire}, as {@code
 * RegistryService} does. Only {@link JAXBException}, {@link Graphs.GraphLimitException} and {@link
 * IllegalArgumentException} (the summary's own checks, which the registry answers as {@code invalid})
 * may come out, within 5 s. Figures it accepts survive a round trip through the wire form.
 *
 * <p>CI runs the inputs in {@code src/test/resources/io/switchboard/registry/server/CallFiguresFuzzTestInputs};
 * to fuzz: {@code JAZZER_FUZZ=1 JAZZER_INSTRUMENT='io.switchboard.**' mvn -pl registry/server-test test
 * -Dtest=CallFiguresFuzzTest}.
 */
class CallFiguresFuzzTest {
    private static final XmlMessages XML = new XmlMessages(RegistryComponent.DESCRIPTOR, 1000);
    private static final DecoderCheck CHECK = new DecoderCheck(Duration.ofSeconds(5),
            List.of(JAXBException.class, Graphs.GraphLimitException.class, IllegalArgumentException.class));

    static {
        try {
            RenewWithStats r = new RenewWithStats();
            r.setName("Echo");
            r.setInstanceId("i-1");
            r.setStats(CallSummary.toWire(new CallSummary(1, List.of())));
            XML.fromXml(XML.toXml(r), RenewWithStats.class);   // JAXB's context, outside the time limit
        } catch (JAXBException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @FuzzTest(maxDuration = "2m")
    void renewWithStats(byte[] input) {
        String xml = new String(input, StandardCharsets.UTF_8);
        CallSummary figures = CHECK.run(input.length, () -> CallSummary.fromWire(
                XML.fromXml(xml, RenewWithStats.class).getStats()));
        if (figures != null && !figures.equals(CallSummary.fromWire(CallSummary.toWire(figures)))) {
            throw new AssertionError("figures changed through the wire form: " + figures);
        }
    }
}
