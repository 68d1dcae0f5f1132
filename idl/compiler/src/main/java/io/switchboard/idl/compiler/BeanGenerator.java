package io.switchboard.idl.compiler;

import com.squareup.javapoet.AnnotationSpec;
import com.squareup.javapoet.ClassName;
import com.squareup.javapoet.CodeBlock;
import com.squareup.javapoet.FieldSpec;
import com.squareup.javapoet.MethodSpec;
import com.squareup.javapoet.ParameterizedTypeName;
import com.squareup.javapoet.TypeName;
import com.squareup.javapoet.TypeSpec;
import com.squareup.javapoet.WildcardTypeName;
import io.switchboard.idl.ComplexTypeModel;
import io.switchboard.idl.FieldModel;
import io.switchboard.idl.ScalarType;
import io.switchboard.idl.runtime.GraphHolder;
import io.switchboard.idl.runtime.GraphMessage;
import io.switchboard.idl.runtime.Graphs;
import io.switchboard.idl.runtime.OffsetDateTimeAdapter;
import jakarta.xml.bind.annotation.XmlAccessType;
import jakarta.xml.bind.annotation.XmlAccessorType;
import jakarta.xml.bind.annotation.XmlAttribute;
import jakarta.xml.bind.annotation.XmlElement;
import jakarta.xml.bind.annotation.XmlElementWrapper;
import jakarta.xml.bind.annotation.XmlElements;
import jakarta.xml.bind.annotation.XmlID;
import jakarta.xml.bind.annotation.XmlIDREF;
import jakarta.xml.bind.annotation.XmlList;
import jakarta.xml.bind.annotation.XmlRootElement;
import jakarta.xml.bind.annotation.XmlSchemaType;
import jakarta.xml.bind.annotation.XmlType;
import jakarta.xml.bind.annotation.adapters.XmlJavaTypeAdapter;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import javax.lang.model.element.Modifier;

/**
 * Generates the JAXB bean of a complex type or of an operation's message element. The annotations
 * say exactly what {@link WireSchema} writes into the WSDL; the two are kept in step by tests
 * that validate marshalled messages against the WSDL's schema.
 */
final class BeanGenerator {
    static final String GRAPH_ELEMENT = "sb-graph";
    static final String ID_ATTRIBUTE = "sb-id";
    static final String LIST_ITEM = "item";

    private final CompileContext ctx;

    BeanGenerator(CompileContext ctx) {
        this.ctx = ctx;
    }

    TypeSpec generate(ComplexTypeModel type) {
        ClassName self = ctx.types.typeClass(type.name());
        TypeSpec.Builder b = TypeSpec.classBuilder(self)
                .addModifiers(Modifier.PUBLIC)
                .addJavadoc(type.element()
                        ? "Message element {@code $L} of $L.\n" : "Schema type {@code $L} of $L.\n",
                        type.name(), ctx.model.componentName())
                .addJavadoc(ctx.generatedNote())
                .addAnnotation(AnnotationSpec.builder(XmlAccessorType.class)
                        .addMember("value", "$T.FIELD", XmlAccessType.class).build());

        List<String> order = new ArrayList<>();
        for (FieldModel f : type.fields()) {
            order.add(f.name());
        }
        boolean graphMessage = type.element() && !ctx.graphTypesReachableFrom(type).isEmpty();
        if (graphMessage) {
            order.add("switchboardGraph");
        }
        AnnotationSpec.Builder xmlType = AnnotationSpec.builder(XmlType.class)
                .addMember("name", "$S", type.element() ? "" : type.name());
        CodeBlock.Builder prop = CodeBlock.builder().add("{");
        for (int i = 0; i < order.size(); i++) {
            prop.add(i == 0 ? "$S" : ", $S", order.get(i));
        }
        xmlType.addMember("propOrder", prop.add("}").build());
        b.addAnnotation(xmlType.build());
        if (type.element()) {
            b.addAnnotation(AnnotationSpec.builder(XmlRootElement.class).addMember("name", "$S", type.name()).build());
        }

        for (FieldModel f : type.fields()) {
            b.addField(field(f));
            TypeName t = ctx.types.fieldType(f);
            b.addMethod(MethodSpec.methodBuilder(JavaTypes.getter(f)).addModifiers(Modifier.PUBLIC).returns(t)
                    .addStatement("return $N", f.name()).build());
            b.addMethod(MethodSpec.methodBuilder(JavaTypes.setter(f)).addModifiers(Modifier.PUBLIC)
                    .addParameter(t, f.name()).addStatement("this.$N = $N", f.name(), f.name()).build());
        }
        b.addMethod(MethodSpec.constructorBuilder().addModifiers(Modifier.PUBLIC).build());

        if (type.recursive()) {
            addGraphId(b);
        }
        if (type.recursive() || ctx.reachesGraph(type)) {
            b.addSuperinterface(graphMessage ? GraphMessage.class : GraphHolder.class);
            b.addMethod(visitReferences(type));
        }
        if (graphMessage) {
            addGraphTable(b, type);
        }
        return b.build();
    }

    private FieldSpec field(FieldModel f) {
        FieldSpec.Builder fb = FieldSpec.builder(ctx.types.fieldType(f), f.name(), Modifier.PRIVATE);
        if (JavaTypes.isPackedArray(f)) {
            // a packed array is one element holding a whitespace-separated list: absent = null, empty = empty
            fb.addAnnotation(XmlList.class);
            fb.addAnnotation(AnnotationSpec.builder(XmlElement.class).addMember("name", "$S", f.name()).build());
        } else if (f.repeated()) {
            fb.addAnnotation(AnnotationSpec.builder(XmlElementWrapper.class).addMember("name", "$S", f.name()).build());
            fb.addAnnotation(AnnotationSpec.builder(XmlElement.class).addMember("name", "$S", LIST_ITEM)
                    .addMember("nillable", "true").build());
        } else {
            AnnotationSpec.Builder el = AnnotationSpec.builder(XmlElement.class).addMember("name", "$S", f.name());
            if (!f.optional()) {
                el.addMember("required", "true");
            }
            if (f.nillable()) {
                el.addMember("nillable", "true");
            }
            fb.addAnnotation(el.build());
        }
        if (f.graphReference()) {
            fb.addAnnotation(XmlIDREF.class);
        }
        if (f.isScalar() && f.scalar() == ScalarType.DATE_TIME) {
            fb.addAnnotation(AnnotationSpec.builder(XmlJavaTypeAdapter.class)
                    .addMember("value", "$T.class", OffsetDateTimeAdapter.class).build());
            fb.addAnnotation(AnnotationSpec.builder(XmlSchemaType.class).addMember("name", "$S", "dateTime").build());
        }
        return fb.build();
    }

    private void addGraphId(TypeSpec.Builder b) {
        // The id exists only on the wire: it is computed from the message being written on this
        // thread, so user objects carry no id and may be shared by concurrent calls.
        b.addMethod(MethodSpec.methodBuilder("getSwitchboardId")
                .addAnnotation(AnnotationSpec.builder(XmlAttribute.class).addMember("name", "$S", ID_ATTRIBUTE)
                        .addMember("required", "true").build())
                .addAnnotation(XmlID.class)
                .addModifiers(Modifier.PRIVATE).returns(String.class)
                .addStatement("return $T.idOf(this)", Graphs.class).build());
        b.addMethod(MethodSpec.methodBuilder("setSwitchboardId").addModifiers(Modifier.PRIVATE)
                .addParameter(String.class, "id")
                .addComment("ids only link nodes inside one message; the reader resolves them")
                .build());
    }

    private MethodSpec visitReferences(ComplexTypeModel type) {
        MethodSpec.Builder m = MethodSpec.methodBuilder("switchboardVisitReferences")
                .addAnnotation(Override.class).addModifiers(Modifier.PUBLIC)
                .addParameter(ParameterizedTypeName.get(ClassName.get(Consumer.class),
                        WildcardTypeName.supertypeOf(Object.class)), "out");
        for (FieldModel f : type.fields()) {
            if (f.complexType() == null) {
                continue;
            }
            boolean direct = f.graphReference();
            if (!direct && !ctx.reachesGraph(ctx.model.type(f.complexType()))) {
                continue;
            }
            ClassName ft = ctx.types.typeClass(f.complexType());
            String action = direct ? "out.accept($N)" : "$N.switchboardVisitReferences(out)";
            if (f.repeated()) {
                m.beginControlFlow("if ($N != null)", f.name())
                        .beginControlFlow("for ($T item : $N)", ft, f.name())
                        .beginControlFlow("if (item != null)")
                        .addStatement(action, "item")
                        .endControlFlow().endControlFlow().endControlFlow();
            } else {
                m.beginControlFlow("if ($N != null)", f.name()).addStatement(action, f.name()).endControlFlow();
            }
        }
        return m.build();
    }

    private void addGraphTable(TypeSpec.Builder b, ComplexTypeModel type) {
        AnnotationSpec.Builder elements = AnnotationSpec.builder(XmlElements.class);
        Set<String> reachable = ctx.graphTypesReachableFrom(type);
        for (String t : reachable) {
            elements.addMember("value", "$L", AnnotationSpec.builder(XmlElement.class)
                    .addMember("name", "$S", t).addMember("type", "$T.class", ctx.types.typeClass(t)).build());
        }
        TypeName listOfObject = ParameterizedTypeName.get(List.class, Object.class);
        b.addField(FieldSpec.builder(listOfObject, "switchboardGraph", Modifier.PRIVATE)
                .addJavadoc("Every linked node of this message, flat; filled only while the message is on the wire.\n")
                .addAnnotation(AnnotationSpec.builder(XmlElementWrapper.class).addMember("name", "$S", GRAPH_ELEMENT).build())
                .addAnnotation(elements.build())
                .build());
        b.addMethod(MethodSpec.methodBuilder("switchboardGraph").addAnnotation(Override.class)
                .addModifiers(Modifier.PUBLIC).addParameter(listOfObject, "nodes")
                .addStatement("this.switchboardGraph = nodes").build());
    }
}
