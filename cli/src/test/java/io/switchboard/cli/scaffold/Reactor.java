package io.switchboard.cli.scaffold;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/** This repository's build as its poms describe it: the root, the version, the modules, what they manage. */
final class Reactor {
    /**
     * One module of the build.
     *
     * @param published whether a project of one's own can depend on it: a jar or plug-in whose pom does not
     *                  set {@code maven.deploy.skip} (the command line and test modules do)
     */
    record Module(Path dir, String artifactId, String packaging, boolean published) {
        Path pom() {
            return dir.resolve("pom.xml");
        }
    }

    private Reactor() {
    }

    /** The repository's root: the parent of the cli module, where Surefire runs these tests. */
    static Path root() {
        Path module = Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath();
        Path root = module.getParent();
        if (root == null || !"switchboard-parent".equals(text(pom(root.resolve("pom.xml")), "artifactId"))) {
            throw new IllegalStateException("run from the cli module of a Switchboard checkout, not " + module);
        }
        return root;
    }

    static String version() {
        return text(pom(root().resolve("pom.xml")), "version");
    }

    /** Every module the root pom reaches through {@code <modules>}, depth first, the root included. */
    static List<Module> modules() {
        List<Module> all = new ArrayList<>();
        collect(root(), all);
        return all;
    }

    private static void collect(Path dir, List<Module> into) {
        Element project = pom(dir.resolve("pom.xml"));
        String packaging = text(project, "packaging") == null ? "jar" : text(project, "packaging");
        Element properties = child(project, "properties");
        boolean deploySkipped = properties != null && "true".equals(text(properties, "maven.deploy.skip"));
        into.add(new Module(dir, text(project, "artifactId"), packaging, !packaging.equals("pom") && !deploySkipped));
        Element modules = child(project, "modules");
        for (Element m : modules == null ? List.<Element>of() : children(modules, "module")) {
            collect(dir.resolve(m.getTextContent().strip()), into);
        }
    }

    /** The Switchboard artifacts a pom's {@code <dependencyManagement>} lists, with the version written there. */
    static Map<String, String> managedSwitchboardArtifacts(Path pom) {
        Map<String, String> managed = new LinkedHashMap<>();
        Element dm = child(pom(pom), "dependencyManagement");
        for (Element d : children(child(dm, "dependencies"), "dependency")) {
            if ("io.switchboard".equals(text(d, "groupId"))) {
                managed.put(text(d, "artifactId"), text(d, "version"));
            }
        }
        return managed;
    }

    /** The plug-in versions a pom's {@code <pluginManagement>} pins, by artifactId. */
    static Map<String, String> managedPlugins(Path pom) {
        Map<String, String> managed = new LinkedHashMap<>();
        Element pm = child(child(pom(pom), "build"), "pluginManagement");
        for (Element p : children(child(pm, "plugins"), "plugin")) {
            managed.put(text(p, "artifactId"), text(p, "version"));
        }
        return managed;
    }

    static Element pom(Path file) {
        try {
            return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(Files.newInputStream(file))
                    .getDocumentElement();
        } catch (Exception e) {
            throw new IllegalStateException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    static Element child(Element parent, String name) {
        List<Element> found = children(parent, name);
        return found.isEmpty() ? null : found.get(0);
    }

    static List<Element> children(Element parent, String name) {
        List<Element> found = new ArrayList<>();
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) {
                found.add(e);
            }
        }
        return found;
    }

    /** The text of a direct child element, or null. */
    static String text(Element parent, String name) {
        Element e = child(parent, name);
        return e == null ? null : e.getTextContent().strip();
    }
}
