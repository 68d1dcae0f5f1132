package io.switchboard.spring.boot;

import io.switchboard.protocol.Skeleton;
import java.util.ArrayList;
import java.util.List;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ListableBeanFactory;

/** The components an application serves: its beans marked {@link SwitchboardComponent} and its {@link ComponentRegistration} beans. */
final class ServedComponents {
    private ServedComponents() {
    }

    static List<ComponentRegistration> in(ListableBeanFactory beans) {
        List<ComponentRegistration> found = new ArrayList<>();
        for (String beanName : beans.getBeanNamesForAnnotation(SwitchboardComponent.class)) {
            Object bean = beans.getBean(beanName);
            SwitchboardComponent marker = beans.findAnnotationOnBean(beanName, SwitchboardComponent.class);
            Skeleton skeleton = GeneratedCode.skeletonFor(bean, AopUtils.getTargetClass(bean)).orElseThrow(() ->
                    new IllegalStateException("bean '" + beanName + "' is marked @SwitchboardComponent but implements "
                            + "no generated component interface"));
            String name = marker == null || marker.name().isEmpty() ? skeleton.descriptor().name() : marker.name();
            found.add(new ComponentRegistration(name, skeleton));
        }
        found.addAll(beans.getBeanProvider(ComponentRegistration.class).orderedStream().toList());
        return found;
    }
}
