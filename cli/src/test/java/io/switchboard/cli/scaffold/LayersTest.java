package io.switchboard.cli.scaffold;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The floors the folders show hold in the build: the modules under {@code idl/} (schema model,
 * runtime types of generated code, codecs, compiler, Maven plug-in) depend on nothing of
 * Switchboard's outside {@code idl/}, so the protocols, the meta-stub and the registry build on
 * them and never the other way round.
 */
class LayersTest {
    private static final Pattern PACKAGE = Pattern.compile("^package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);
    private static final Pattern IMPORT = Pattern.compile("^import\\s+(?:static\\s+)?(io\\.switchboard\\.[\\w.]+)\\s*;",
            Pattern.MULTILINE);

    @Test
    void idlModulesDependOnlyOnIdlModules() {
        List<Reactor.Module> idl = idlModules();
        Set<String> idlArtifacts = idl.stream().map(Reactor.Module::artifactId).collect(Collectors.toSet());
        List<String> upward = new ArrayList<>();
        for (Reactor.Module m : idl) {
            NodeList dependencies = Reactor.pom(m.pom()).getElementsByTagName("dependency");   // plug-ins' too
            for (int i = 0; i < dependencies.getLength(); i++) {
                Element d = (Element) dependencies.item(i);
                if ("io.switchboard".equals(Reactor.text(d, "groupId")) && !idlArtifacts.contains(Reactor.text(d, "artifactId"))) {
                    upward.add(m.artifactId() + " -> " + Reactor.text(d, "artifactId"));
                }
            }
        }
        assertEquals(List.of(), upward, "idl modules may depend only on idl modules " + idlArtifacts);
    }

    @Test
    void idlSourcesImportOnlyIdlPackages() {
        List<Path> sources = idlModules().stream().flatMap(m -> javaFiles(m.dir().resolve("src/main/java"))).toList();
        Set<String> idlPackages = new TreeSet<>();
        for (Path f : sources) {
            Matcher p = PACKAGE.matcher(read(f));
            if (p.find()) {
                idlPackages.add(p.group(1));
            }
        }
        int imports = 0;
        List<String> upward = new ArrayList<>();
        for (Path f : sources) {
            Matcher i = IMPORT.matcher(read(f));
            while (i.find()) {
                imports++;
                String imported = i.group(1);
                if (idlPackages.stream().noneMatch(p -> imported.startsWith(p + "."))) {
                    upward.add(Reactor.root().relativize(f) + ": " + imported);
                }
            }
        }
        assertTrue(imports > 0 && idlPackages.contains("io.switchboard.idl.runtime"),
                "the scan found the idl sources: " + idlPackages);
        assertEquals(List.of(), upward, "idl sources may import only idl's own packages " + idlPackages);
    }

    /** The jar and plug-in modules under {@code idl/}. */
    private static List<Reactor.Module> idlModules() {
        Path idl = Reactor.root().resolve("idl");
        List<Reactor.Module> modules = Reactor.modules().stream()
                .filter(m -> m.dir().startsWith(idl) && !m.packaging().equals("pom")).toList();
        assertTrue(modules.size() >= 5, "model, runtime, codec, compiler and the plug-in at least: " + modules);
        return modules;
    }

    private static Stream<Path> javaFiles(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            return walk.filter(f -> f.toString().endsWith(".java")).toList().stream();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String read(Path f) {
        try {
            return Files.readString(f);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
