package io.switchboard.idl.compiler;

import com.squareup.javapoet.AnnotationSpec;
import com.squareup.javapoet.ArrayTypeName;
import com.squareup.javapoet.ClassName;
import com.squareup.javapoet.CodeBlock;
import com.squareup.javapoet.FieldSpec;
import com.squareup.javapoet.MethodSpec;
import com.squareup.javapoet.ParameterizedTypeName;
import com.squareup.javapoet.TypeName;
import com.squareup.javapoet.TypeSpec;
import com.squareup.javapoet.WildcardTypeName;
import io.switchboard.codec.documents.InterfaceDocuments;
import io.switchboard.idl.ComplexTypeModel;
import io.switchboard.idl.FieldModel;
import io.switchboard.idl.ScalarType;
import io.switchboard.idl.runtime.ByteListAdapter;
import io.switchboard.idl.runtime.GraphHolder;
import io.switchboard.idl.runtime.GraphMessage;
import io.switchboard.codec.Graphs;
import io.switchboard.idl.runtime.HeterogeneousList;
import io.switchboard.idl.runtime.NdArray;
import io.switchboard.codec.NdArrays;
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
 * say exactly what {@code WireSchema} (switchboard-codec) writes into the WSDL; the two are kept in step by tests
 * that validate marshalled messages against the WSDL's schema.
 */
final class BeanGenerator {
    static final String GRAPH_ELEMENT = InterfaceDocuments.GRAPH_ELEMENT;
    static final String ID_ATTRIBUTE = InterfaceDocuments.ID_ATTRIBUTE;
    static final String LIST_ITEM = InterfaceDocuments.LIST_ITEM;

    private final CompileContext ctx;

    BeanGenerator(CompileContext ctx) {
        this.ctx = ctx;
    }

    TypeSpec generate(ComplexTypeModel type) {
        if (type.heterogeneousList()) {
            return heterogeneousList(type);
        }
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
        if (type.ndArray()) {
            addNdArrayMethods(b, type);
        }
        return b.build();
    }

    /**
     * The Java face of an {@code <sb:ndarray/>} type: the bean keeps the wire form (shape and
     * row-major values, so SOAP, the protobuf codec and size estimates need nothing new) and gains
     * conversions from and to nested arrays ({@code double[][]}, {@code double[][][]}), which
     * refuse ragged or null rows by name.
     */
    private void addNdArrayMethods(TypeSpec.Builder b, ComplexTypeModel type) {
        ClassName self = ctx.types.typeClass(type.name());
        FieldModel values = type.fields().get(1);
        TypeName leaf = ctx.types.fieldType(values) instanceof ArrayTypeName a ? a.componentType : null;
        TypeName flat = ArrayTypeName.of(leaf);
        b.addSuperinterface(NdArray.class);
        b.addMethod(MethodSpec.methodBuilder("ndValues").addAnnotation(Override.class).addModifiers(Modifier.PUBLIC)
                .returns(Object.class).addStatement("return values").build());
        b.addMethod(MethodSpec.methodBuilder("of").addModifiers(Modifier.PUBLIC, Modifier.STATIC).returns(self)
                .addJavadoc("An array of this shape over these row-major values (not copied); refuses a shape that does\n"
                        + "not match the number of values.\n")
                .addParameter(int[].class, "shape").addParameter(flat, "values")
                .addStatement("$T a = new $T()", self, self)
                .addStatement("a.shape = shape.clone()")
                .addStatement("a.values = values")
                .addStatement("$T.requireConsistent(a, $S)", NdArrays.class, type.name())
                .addStatement("return a").build());
        for (int rank = 2; rank <= 3; rank++) {
            b.addMethod(MethodSpec.methodBuilder("of").addModifiers(Modifier.PUBLIC, Modifier.STATIC).returns(self)
                    .addJavadoc("A packed copy of a rectangular $L-d array; a ragged or null row is an\n"
                            + "{@link IllegalArgumentException} that names it.\n", rank)
                    .addParameter(nested(leaf, rank), "array")
                    .addStatement("return fromArray(array)").build());
        }
        b.addMethod(MethodSpec.methodBuilder("fromArray").addModifiers(Modifier.PUBLIC, Modifier.STATIC).returns(self)
                .addJavadoc("A packed copy of a rectangular nested array of any rank ($L[]...[]).\n", leaf)
                .addParameter(Object.class, "array")
                .addStatement("int[] shape = $T.shapeOf(array, $T.class)", NdArrays.class, leaf)
                .addStatement("$T a = new $T()", self, self)
                .addStatement("a.shape = shape")
                .addStatement("a.values = ($T) $T.flatten(array, shape, $T.class)", flat, NdArrays.class, leaf)
                .addStatement("return a").build());
        b.addMethod(MethodSpec.methodBuilder("rank").addModifiers(Modifier.PUBLIC).returns(int.class)
                .addJavadoc("The number of dimensions.\n").addStatement("return shape.length").build());
        b.addMethod(MethodSpec.methodBuilder("get").addModifiers(Modifier.PUBLIC).returns(leaf).varargs()
                .addJavadoc("The value at {@code index}, one index per dimension.\n")
                .addParameter(int[].class, "index")
                .addStatement("return values[$T.offset(shape, index)]", NdArrays.class).build());
        b.addMethod(MethodSpec.methodBuilder("toArray").addModifiers(Modifier.PUBLIC)
                .addTypeVariable(com.squareup.javapoet.TypeVariableName.get("A"))
                .returns(com.squareup.javapoet.TypeVariableName.get("A"))
                .addAnnotation(AnnotationSpec.builder(SuppressWarnings.class).addMember("value", "$S", "unchecked").build())
                .addJavadoc("A new nested array of this shape: {@code $L[][] m = a.toArray()} for a 2-d array.\n", leaf)
                .addStatement("$T.requireConsistent(this, $S)", NdArrays.class, type.name())
                .addStatement("return (A) $T.reshape(shape, values)", NdArrays.class).build());
    }

    /**
     * A heterogeneous list type: one {@code List<Object>} whose elements JAXB writes as the choice's
     * elements, told apart by their Java class (the schema reader made the classes distinct).
     */
    private TypeSpec heterogeneousList(ComplexTypeModel type) {
        ClassName self = ctx.types.typeClass(type.name());
        TypeName listOfObject = ParameterizedTypeName.get(List.class, Object.class);
        AnnotationSpec.Builder elements = AnnotationSpec.builder(XmlElements.class);
        StringBuilder javadoc = new StringBuilder();
        CodeBlock.Builder classes = CodeBlock.builder();
        for (FieldModel alternative : type.fields()) {
            classes.add(classes.isEmpty() ? "$T.class" : ", $T.class", ctx.types.alternativeType(alternative));
            elements.addMember("value", "$L", AnnotationSpec.builder(XmlElement.class)
                    .addMember("name", "$S", alternative.name())
                    .addMember("type", "$T.class", ctx.types.alternativeType(alternative)).build());
            javadoc.append(javadoc.length() == 0 ? "" : ", ").append("{@code ").append(alternative.name()).append("} (")
                    .append(alternative.isScalar() ? "xs:" + alternative.scalar().xsdName() : alternative.complexType())
                    .append(")");
        }
        CodeBlock alternativeClasses = classes.build();
        return TypeSpec.classBuilder(self).addModifiers(Modifier.PUBLIC)
                .addJavadoc("Heterogeneous list type {@code $L} of $L. Each element is one of the alternatives\n"
                        + "$L; its Java class says which. Lists nest by value, at most\n"
                        + "{@link $T#MAX_DEPTH} deep; no element is null.\n", type.name(), ctx.model.componentName(),
                        javadoc.toString(), HeterogeneousList.class)
                .addJavadoc(ctx.generatedNote())
                .addSuperinterface(HeterogeneousList.class)
                .addAnnotation(AnnotationSpec.builder(XmlAccessorType.class)
                        .addMember("value", "$T.FIELD", XmlAccessType.class).build())
                .addAnnotation(AnnotationSpec.builder(XmlType.class).addMember("name", "$S", type.name())
                        .addMember("propOrder", "{$S}", "items").build())
                .addField(FieldSpec.builder(listOfObject, "items", Modifier.PRIVATE)
                        .addAnnotation(elements.build())
                        .initializer("new $T<>()", ArrayList.class).build())
                .addField(FieldSpec.builder(ParameterizedTypeName.get(ClassName.get(List.class),
                        ParameterizedTypeName.get(ClassName.get(Class.class), WildcardTypeName.subtypeOf(Object.class))),
                        "ALTERNATIVES", Modifier.PRIVATE, Modifier.STATIC, Modifier.FINAL)
                        .initializer("$T.of($L)", List.class, alternativeClasses).build())
                .addMethod(MethodSpec.methodBuilder("alternativeClasses").addAnnotation(Override.class)
                        .addModifiers(Modifier.PUBLIC).returns(ParameterizedTypeName.get(ClassName.get(List.class),
                                ParameterizedTypeName.get(ClassName.get(Class.class), WildcardTypeName.subtypeOf(Object.class))))
                        .addStatement("return ALTERNATIVES").build())
                .addMethod(MethodSpec.constructorBuilder().addModifiers(Modifier.PUBLIC).build())
                .addMethod(MethodSpec.methodBuilder("of").addModifiers(Modifier.PUBLIC, Modifier.STATIC).varargs()
                        .returns(self).addParameter(Object[].class, "items")
                        .addJavadoc("A list of these elements, in order (copied into a new modifiable list).\n")
                        .addStatement("$T list = new $T()", self, self)
                        .addStatement("list.items.addAll($T.asList(items))", java.util.Arrays.class)
                        .addStatement("return list").build())
                .addMethod(MethodSpec.methodBuilder("getItems").addAnnotation(Override.class)
                        .addModifiers(Modifier.PUBLIC).returns(listOfObject).addStatement("return items").build())
                .addMethod(MethodSpec.methodBuilder("setItems").addModifiers(Modifier.PUBLIC)
                        .addParameter(listOfObject, "items")
                        .addJavadoc("Sets the elements; null means no elements.\n")
                        .addStatement("this.items = items == null ? new $T<>() : items", ArrayList.class).build())
                .build();
    }

    private static TypeName nested(TypeName leaf, int rank) {
        TypeName t = leaf;
        for (int i = 0; i < rank; i++) {
            t = ArrayTypeName.of(t);
        }
        return t;
    }

    private FieldSpec field(FieldModel f) {
        FieldSpec.Builder fb = FieldSpec.builder(ctx.types.fieldType(f), f.name(), Modifier.PRIVATE);
        if (JavaTypes.isPackedArray(f) && f.scalar() == ScalarType.BYTE) {
            // JAXB takes byte[] for base64 and refuses @XmlList on it: the same list text through an adapter
            fb.addAnnotation(AnnotationSpec.builder(XmlJavaTypeAdapter.class)
                    .addMember("value", "$T.class", ByteListAdapter.class).build());
            fb.addAnnotation(AnnotationSpec.builder(XmlElement.class).addMember("name", "$S", f.name()).build());
        } else if (JavaTypes.isPackedArray(f)) {
            // a packed array is one element holding a whitespace-separated list: absent = null, empty = empty
            fb.addAnnotation(XmlList.class);
            fb.addAnnotation(AnnotationSpec.builder(XmlElement.class).addMember("name", "$S", f.name()).build());
        } else if (f.repeated()) {
            fb.addAnnotation(AnnotationSpec.builder(XmlElementWrapper.class).addMember("name", "$S", f.name()).build());
            AnnotationSpec.Builder item = AnnotationSpec.builder(XmlElement.class).addMember("name", "$S", LIST_ITEM);
            if (!f.graphReference()) {
                item.addMember("nillable", "true");   // JAXB's IDREF lists cannot say nil: references are never null
            }
            fb.addAnnotation(item.build());
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
