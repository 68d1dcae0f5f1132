package io.switchboard.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class ChildJvmTest {
    private static List<String> tiers(List<String> command) {
        return command.stream().filter(o -> o.startsWith("-XX:TieredStopAtLevel=")).toList();
    }

    @Test
    void aChildStopsAtTheFirstTierUnlessItsOptionsSetOne() {
        List<String> quick = ChildJvm.javaCommand(List.of("-Xmx256m"), ChildJvmTest.class, "a");
        assertEquals(List.of("-XX:TieredStopAtLevel=1"), tiers(quick));
        assertEquals(List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp"), quick.subList(1, 4));
        assertEquals(List.of(ChildJvmTest.class.getName(), "a"), quick.subList(quick.size() - 2, quick.size()));

        // HotSpot takes the last of two such flags: a first tier added after the caller's would win over it
        List<String> full = ChildJvm.javaCommand(List.of("-XX:TieredStopAtLevel=4", "-Xmx1g"), ChildJvmTest.class);
        assertEquals(List.of("-XX:TieredStopAtLevel=4"), tiers(full));
    }
}
