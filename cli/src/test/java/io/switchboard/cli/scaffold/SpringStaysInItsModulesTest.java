package io.switchboard.cli.scaffold;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Spring is on the class path of the Spring modules only: {@code mvn dependency:tree} over the
 * whole build, test scope included, finds {@code org.springframework} in no other module's tree.
 * A user of the plain runtime, the command line or the registry gets no Spring.
 */
class SpringStaysInItsModulesTest {
    private static final Set<String> SPRING_MODULES = Set.of("switchboard-spring-parent",
            "switchboard-spring-boot-autoconfigure", "switchboard-spring-boot-starter");

    @TempDir
    Path tmp;

    @Test
    void noModuleButTheSpringOnesHasSpringInItsDependencyTree() throws Exception {
        // the tree needs the modules' poms only (the reactor's), no jar: nothing to build or install first
        Path trees = tmp.resolve("trees.txt");
        String build = ChildMaven.build(Reactor.root(), PrivateMavenRepository.shared(), tmp.resolve("maven"),
                "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:tree", "-DoutputFile=" + trees,
                "-DappendOutput=true");
        Map<String, String> byModule = split(Files.readString(trees));

        Set<String> modules = new TreeSet<>();
        Reactor.modules().forEach(m -> modules.add(m.artifactId()));
        assertTrue(byModule.keySet().containsAll(modules), "a tree per module: " + byModule.keySet() + "\n" + build);

        // the scan sees Spring where it is, or it proves nothing
        assertTrue(byModule.get("switchboard-spring-boot-autoconfigure").contains("org.springframework.boot:"),
                byModule.get("switchboard-spring-boot-autoconfigure"));
        assertTrue(byModule.get("switchboard-spring-boot-starter").contains("org.springframework.boot:"),
                byModule.get("switchboard-spring-boot-starter"));
        List<String> withSpring = byModule.entrySet().stream()
                .filter(e -> !SPRING_MODULES.contains(e.getKey()) && e.getValue().contains("org.springframework"))
                .map(Map.Entry::getKey).toList();
        assertEquals(List.of(), withSpring, "modules with Spring in their dependency tree");
    }

    /** The appended trees, by module: each starts with the module's own line at column 0. */
    private static Map<String, String> split(String trees) {
        Map<String, String> byModule = new LinkedHashMap<>();
        String current = null;
        StringBuilder tree = new StringBuilder();
        for (String line : trees.split("\n")) {
            if (line.startsWith("io.switchboard:")) {
                if (current != null) {
                    byModule.put(current, tree.toString());
                }
                current = line.split(":")[1];
                tree.setLength(0);
            }
            tree.append(line).append('\n');
        }
        if (current != null) {
            byModule.put(current, tree.toString());
        }
        return byModule;
    }
}
