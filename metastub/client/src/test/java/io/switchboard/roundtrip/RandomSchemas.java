package io.switchboard.roundtrip;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Interface schemas made at random within the compiler's conventions (docs/guide.md, "Writing a
 * component"): structs of scalars of every type, optional, nillable and repeated fields, structs
 * nested in structs, a linked type with two references to itself (cycles and shared nodes) and
 * sometimes a second linked type referring back to it, a heterogeneous list that nests itself and
 * holds a struct, an n-d array. Each schema has one operation, {@code echo}, whose response
 * has exactly the request's fields, so a mirror skeleton can answer any request with its values.
 */
final class RandomSchemas {
    static final String[] SCALARS = {"boolean", "byte", "short", "int", "long", "float", "double", "string",
        "base64Binary", "dateTime"};
    /** Alternatives of a heterogeneous list: distinct Java classes, no date-time (docs/guide.md). */
    private static final String[] LIST_SCALARS = {"boolean", "byte", "short", "int", "long", "float", "double",
        "string", "base64Binary"};
    private static final String[] ND_VALUES = {"double", "int", "long", "float"};

    private RandomSchemas() {
    }

    /** One schema: the component's name, the Java package its code goes to, the schema text. */
    record Schema(String component, String javaPackage, String xsd) {
    }

    static List<Schema> make(long seed, int count) {
        Random random = new Random(seed);
        List<Schema> schemas = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String component = "Rt" + i;
            schemas.add(new Schema(component, "io.switchboard.roundtrip.gen.rt" + i, new Writer(random, component).write()));
        }
        return schemas;
    }

    private static final class Writer {
        private final Random random;
        private final String component;
        private final StringBuilder out = new StringBuilder();
        /** Named types usable as struct fields: structs made so far, then the list and n-d array types. */
        private final List<String> valueTypes = new ArrayList<>();
        /** Structs that reach no linked type: a heterogeneous list may hold them. */
        private final List<String> plainStructs = new ArrayList<>();
        private boolean linked;

        Writer(Random random, String component) {
            this.random = random;
            this.component = component;
        }

        String write() {
            String ns = "urn:switchboard:test:" + component.toLowerCase();
            out.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
                    .append("<xs:schema xmlns:xs=\"http://www.w3.org/2001/XMLSchema\" xmlns:tns=\"").append(ns)
                    .append("\" targetNamespace=\"").append(ns).append("\" elementFormDefault=\"qualified\">\n")
                    .append("  <xs:annotation><xs:appinfo><sb:component xmlns:sb=\"urn:switchboard:idl\" name=\"")
                    .append(component).append("\"><sb:operation name=\"echo\" idempotent=\"true\"/>")
                    .append("</sb:component></xs:appinfo></xs:annotation>\n");
            linked = random.nextInt(10) < 7;
            boolean peer = linked && random.nextBoolean();
            if (linked) {
                // the linked types: two references to the own type (cycles, shared nodes), one to the peer
                complexType("Node", () -> {
                    scalarFields(1 + random.nextInt(3), "v");
                    element("next", "tns:Node", occurs());
                    element("other", "tns:Node", occurs());
                    if (peer) {
                        element("peer", "tns:Peer", occurs());
                    }
                });
                if (peer) {
                    complexType("Peer", () -> {
                        scalarFields(1 + random.nextInt(2), "w");
                        element("back", "tns:Node", occurs());
                    });
                }
            }
            int structs = 1 + random.nextInt(3);
            for (int s = 0; s < structs; s++) {
                String name = "S" + s;
                boolean[] reachesLinked = {false};
                complexType(name, () -> {
                    int fields = 1 + random.nextInt(5);
                    for (int f = 0; f < fields; f++) {
                        String type = fieldType(false);
                        reachesLinked[0] |= type.equals("tns:Node") || type.equals("tns:Peer")
                                || type.startsWith("tns:S") && !plainStructs.contains(type.substring(4));
                        element("f" + f, type, occurs());
                    }
                });
                valueTypes.add(name);
                if (!reachesLinked[0]) {
                    plainStructs.add(name);
                }
            }
            if (random.nextInt(10) < 6) {
                out.append("  <xs:complexType name=\"Mix\">\n    <xs:choice minOccurs=\"0\" maxOccurs=\"unbounded\">\n");
                List<String> alternatives = new ArrayList<>(List.of(LIST_SCALARS));
                java.util.Collections.shuffle(alternatives, random);
                int scalars = 1 + random.nextInt(4);
                for (int a = 0; a < scalars; a++) {
                    out.append("      <xs:element name=\"a").append(a).append("\" type=\"xs:").append(alternatives.get(a))
                            .append("\"/>\n");
                }
                if (!plainStructs.isEmpty() && random.nextBoolean()) {
                    out.append("      <xs:element name=\"struct\" type=\"tns:")
                            .append(plainStructs.get(random.nextInt(plainStructs.size()))).append("\"/>\n");
                }
                out.append("      <xs:element name=\"sub\" type=\"tns:Mix\"/>\n    </xs:choice>\n  </xs:complexType>\n");
                valueTypes.add("Mix");
            }
            if (random.nextInt(10) < 4) {
                out.append("  <xs:complexType name=\"Grid\">\n")
                        .append("    <xs:annotation><xs:appinfo><sb:ndarray xmlns:sb=\"urn:switchboard:idl\"/></xs:appinfo></xs:annotation>\n")
                        .append("    <xs:sequence>\n      <xs:element name=\"shape\" type=\"xs:int\" minOccurs=\"0\" maxOccurs=\"unbounded\"/>\n")
                        .append("      <xs:element name=\"values\" type=\"xs:").append(ND_VALUES[random.nextInt(ND_VALUES.length)])
                        .append("\" minOccurs=\"0\" maxOccurs=\"unbounded\"/>\n    </xs:sequence>\n  </xs:complexType>\n");
                valueTypes.add("Grid");
            }
            StringBuilder fields = new StringBuilder();
            int count = 1 + random.nextInt(6);
            StringBuilder saved = new StringBuilder(out);
            out.setLength(0);
            for (int f = 0; f < count; f++) {
                element("p" + f, fieldType(true), occurs());
            }
            fields.append(out);
            out.setLength(0);
            out.append(saved);
            for (String message : new String[] {"echo", "echoResponse"}) {
                out.append("  <xs:element name=\"").append(message).append("\"><xs:complexType><xs:sequence>\n")
                        .append(fields).append("  </xs:sequence></xs:complexType></xs:element>\n");
            }
            return out.append("</xs:schema>\n").toString();
        }

        /** A field's type: mostly scalars, else a named type made so far (the message may also refer to the linked type). */
        private String fieldType(boolean message) {
            int r = random.nextInt(10);
            if (r < 5 || valueTypes.isEmpty() && !linked) {
                return "xs:" + SCALARS[random.nextInt(SCALARS.length)];
            }
            if (linked && (r < 7 || valueTypes.isEmpty()) && (message || random.nextBoolean())) {
                return "tns:Node";
            }
            if (valueTypes.isEmpty()) {
                return "xs:" + SCALARS[random.nextInt(SCALARS.length)];
            }
            return "tns:" + valueTypes.get(random.nextInt(valueTypes.size()));
        }

        private void scalarFields(int count, String prefix) {
            for (int i = 0; i < count; i++) {
                element(prefix + i, "xs:" + SCALARS[random.nextInt(SCALARS.length)], occurs());
            }
        }

        /** minOccurs, maxOccurs and nillable, as attributes. */
        private String occurs() {
            StringBuilder b = new StringBuilder();
            if (random.nextInt(3) == 0) {
                b.append(" minOccurs=\"0\"");
            }
            if (random.nextInt(4) == 0) {
                b.append(" maxOccurs=\"unbounded\"");
            }
            if (random.nextInt(4) == 0) {
                b.append(" nillable=\"true\"");
            }
            return b.toString();
        }

        private void element(String name, String type, String occurs) {
            out.append("      <xs:element name=\"").append(name).append("\" type=\"").append(type).append('"')
                    .append(occurs).append("/>\n");
        }

        private void complexType(String name, Runnable fields) {
            out.append("  <xs:complexType name=\"").append(name).append("\">\n    <xs:sequence>\n");
            fields.run();
            out.append("    </xs:sequence>\n  </xs:complexType>\n");
        }
    }
}
