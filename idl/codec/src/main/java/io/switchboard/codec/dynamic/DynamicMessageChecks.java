package io.switchboard.codec.dynamic;

import io.switchboard.codec.message.MessageChecks;
import io.switchboard.codec.message.SendChecks;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.idl.FieldModel;
import io.switchboard.idl.ScalarType;
import java.time.OffsetDateTime;
import java.util.List;

/**
 * The checks every protocol makes before sending ({@link MessageChecks}) for {@link DynamicRecord}s,
 * driven by the interface model: the same checks, in the same order, as a generated
 * {@code XxxMessageChecks} makes on beans, so a value is refused alike with generated code or
 * without. A record also has its values held to their field types here (a value may have been put
 * into a list after {@code set}).
 */
final class DynamicMessageChecks extends MessageChecks {
    private final DynamicInterface iface;

    DynamicMessageChecks(DynamicInterface iface) {
        this.iface = iface;
    }

    @Override
    protected void checkMessage(SendChecks c, Object message) {
        if (!(message instanceof DynamicRecord r) || !r.type.message()) {
            throw new IllegalArgumentException("not a message of " + iface.model().componentName() + ": "
                    + (message == null ? "null" : message instanceof DynamicRecord d ? d.type.name() : message.getClass().getName()));
        }
        if (r.type.reachesGraph) {
            c.nodes(r);
        }
        checkFields(c, r);
    }

    @Override
    protected void checkNode(SendChecks c, Object node) {
        if (!(node instanceof DynamicRecord r) || r.type.nodeType < 0) {
            throw new IllegalArgumentException("not a linked node of " + iface.model().componentName() + ": " + node);
        }
        checkFields(c, r);
    }

    private void checkFields(SendChecks c, DynamicRecord r) {
        DynamicType t = r.type;
        for (int i = 0; i < t.fields.length; i++) {
            checkField(c, t, i, r.values[i]);
        }
    }

    @SuppressWarnings("unchecked")
    private void checkField(SendChecks c, DynamicType owner, int i, Object v) {
        FieldModel f = owner.fields[i];
        String name = owner.name() + "." + f.name();
        DynamicRecord.check(owner, i, v);   // a value set around set(), e.g. into a list afterwards
        if (DynamicType.requiredReference(f)) {
            c.required(v, name);
        }
        if (v == null && DynamicType.requiredPrimitive(f)) {
            throw WireFormatException.malformed(name, "required (xs:" + f.scalar().xsdName() + "), but it is not set");
        }
        if (v == null || f.isScalar() && f.repeated() && f.scalar().isPrimitive()) {
            return;
        }
        if (f.graphReference()) {
            if (f.repeated()) {
                c.refs((List<?>) v, name);   // the nodes themselves are checked from the node table
            }
            return;
        }
        if (!f.isScalar()) {
            DynamicType target = owner.targets[i];
            if (f.repeated()) {
                for (Object e : (List<?>) v) {
                    checkValue(c, target, e);
                }
            } else {
                checkValue(c, target, v);
            }
            return;
        }
        if (f.repeated()) {
            if (f.scalar() == ScalarType.STRING) {
                c.strings((List<String>) v, name);
            } else if (f.scalar() == ScalarType.DATE_TIME) {
                c.dateTimes((List<OffsetDateTime>) v, name);
            }
        } else {
            checkScalar(f, v, name);
        }
    }

    private static void checkScalar(FieldModel f, Object v, String name) {
        if (f.scalar() == ScalarType.STRING) {
            SendChecks.string((String) v, name);
        } else if (f.scalar() == ScalarType.DATE_TIME) {
            SendChecks.dateTime((OffsetDateTime) v, name);
        }
    }

    /** A struct or heterogeneous list value of {@code type} (null passes, as in generated code). */
    private void checkValue(SendChecks c, DynamicType type, Object v) {
        if (v == null) {
            return;
        }
        if (type.heterogeneousList()) {
            checkList(c, (DynamicList) v);
            return;
        }
        DynamicRecord r = (DynamicRecord) v;
        if (type.model.ndArray()) {
            String problem = DynamicRecord.ndInconsistency(r);
            if (problem != null) {
                throw WireFormatException.malformed(type.name(), "n-d array " + type.name() + ": " + problem);
            }
        }
        checkFields(c, r);
    }

    /** A heterogeneous list: each element an alternative's value; null, foreign values and deep nesting refused. */
    private void checkList(SendChecks c, DynamicList v) {
        if (!c.enterList(v)) {
            return;
        }
        DynamicType t = v.type;
        for (Object e : v) {
            int a = e == null ? -1 : t.alternativeOf(e);
            if (a < 0) {
                throw c.notAnAlternative(e, v);   // DynamicList refuses these when added; kept as a guard
            }
            DynamicType target = t.targets[a];
            if (target == null) {
                checkScalar(t.fields[a], e, t.name() + "." + t.fields[a].name());
            } else {
                checkValue(c, target, e);
            }
        }
        c.leaveList();
    }
}
