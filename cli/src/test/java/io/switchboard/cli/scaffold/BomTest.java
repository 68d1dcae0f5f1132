package io.switchboard.cli.scaffold;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** switchboard-bom lists exactly what the build publishes, at the build's version. */
class BomTest {
    @Test
    void theBomListsEveryPublishedArtifactAndThoseTheParentManages() {
        Map<String, String> bom = Reactor.managedSwitchboardArtifacts(Reactor.root().resolve("bom/pom.xml"));
        List<Reactor.Module> modules = Reactor.modules();
        // what a project of one's own can depend on: every jar but the command line and test modules
        Set<String> published = modules.stream().filter(m -> m.published() && m.packaging().equals("jar"))
                .map(Reactor.Module::artifactId).collect(Collectors.toCollection(TreeSet::new));
        assertEquals(published, new TreeSet<>(bom.keySet()), "every artifact the build publishes is in the BOM");

        Set<String> unpublished = modules.stream().filter(m -> !m.published()).map(Reactor.Module::artifactId)
                .collect(Collectors.toSet());
        Set<String> parent = new TreeSet<>(Reactor.managedSwitchboardArtifacts(Reactor.root().resolve("pom.xml")).keySet());
        parent.removeAll(unpublished);
        assertEquals(parent, new TreeSet<>(bom.keySet()),
                "switchboard-bom manages what switchboard-parent does, less what is not published");

        bom.forEach((artifact, version) -> assertEquals("${project.version}", version, artifact));
        Map<String, String> parentPlugins = Reactor.managedPlugins(Reactor.root().resolve("pom.xml"));
        Map<String, String> bomPlugins = Reactor.managedPlugins(Reactor.root().resolve("bom/pom.xml"));
        assertTrue(bomPlugins.containsKey("maven-install-plugin"), "mvn install runs the build's install plug-in");
        bomPlugins.forEach((plugin, version) -> assertEquals(parentPlugins.get(plugin), version, plugin));
        assertEquals(Reactor.version(), Reactor.text(Reactor.pom(Reactor.root().resolve("bom/pom.xml")), "version"),
                "the BOM has no parent to inherit the version from: it is written out, and must follow the build's");
    }
}
