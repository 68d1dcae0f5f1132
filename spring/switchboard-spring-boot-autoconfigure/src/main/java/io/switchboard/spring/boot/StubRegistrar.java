package io.switchboard.spring.boot;

import io.switchboard.client.Switchboard;
import io.switchboard.idl.runtime.ServiceDescriptor;
import java.util.Map;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.type.AnnotationMetadata;

/** Registers a bean per stub class of {@link ImportSwitchboardStubs}, unless the application defines one by that name. */
final class StubRegistrar implements ImportBeanDefinitionRegistrar, BeanFactoryAware {
    private BeanFactory beans;

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beans = beanFactory;
    }

    @Override
    public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
        Map<String, Object> attributes = metadata.getAnnotationAttributes(ImportSwitchboardStubs.class.getName());
        if (attributes == null) {
            return;
        }
        for (Class<?> stubClass : (Class<?>[]) attributes.get("value")) {
            String beanName = "switchboardStub." + stubClass.getName();
            if (!registry.containsBeanDefinition(beanName)) {
                registry.registerBeanDefinition(beanName, definition(stubClass));
            }
        }
    }

    private <T> RootBeanDefinition definition(Class<T> stubClass) {
        ServiceDescriptor descriptor = GeneratedCode.descriptorOfStub(stubClass);   // a wrong class fails at start
        return new RootBeanDefinition(stubClass, () -> {
            String name = beans.getBean(SwitchboardClientProperties.class).nameFor(stubClass, descriptor.name());
            Switchboard switchboard = beans.getBean(Switchboard.class);
            return GeneratedCode.newStub(stubClass, new LookupOnFirstCall(switchboard, name, descriptor));
        });
    }
}
