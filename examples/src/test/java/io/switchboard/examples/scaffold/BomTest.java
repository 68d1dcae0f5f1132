package io.switchboard.examples.scaffold;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** switchboard-bom lists exactly what the build publishes, at the build's version. */
class BomTest {
    @Test
    void theBomListsWhatTheParentManagesAndTheReactorBuilds() {
        Map<String, String> bom = Reactor.managedSwitchboardArtifacts(Reactor.root().resolve("bom/pom.xml"));
        Map<String, String> parent = Reactor.managedSwitchboardArtifacts(Reactor.root().resolve("pom.xml"));
        assertEquals(new TreeSet<>(parent.keySet()), new TreeSet<>(bom.keySet()),
                "switchboard-bom and switchboard-parent manage the same artifacts");

        // what a project of one's own can depend on: every jar but the command line itself
        List<String> built = Reactor.modules().stream().filter(m -> m.packaging().equals("jar"))
                .map(Reactor.Module::artifactId).filter(a -> !a.equals("switchboard-examples")).toList();
        assertEquals(new TreeSet<>(built), new TreeSet<>(bom.keySet()),
                "every artifact the build publishes is in the BOM");

        bom.forEach((artifact, version) -> assertEquals("${project.version}", version, artifact));
        assertEquals(Reactor.version(), Reactor.text(Reactor.pom(Reactor.root().resolve("bom/pom.xml")), "version"),
                "the BOM has no parent to inherit the version from: it is written out, and must follow the build's");
    }
}
