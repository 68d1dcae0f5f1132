package io.switchboard.spring.boot;

import io.switchboard.protocol.Skeleton;
import java.util.Objects;

/**
 * A component to serve, spelled out: the skeleton and the registry name. Every bean of this type
 * is exported beside the beans marked {@link SwitchboardComponent}.
 *
 * <pre>{@code
 * @Bean
 * ComponentRegistration echoEu(EchoService echo) {
 *     return new ComponentRegistration("Echo-eu", EchoComponent.skeleton(echo));
 * }
 * }</pre>
 *
 * @param name     the registry name
 * @param skeleton what serves the calls
 */
public record ComponentRegistration(String name, Skeleton skeleton) {
    public ComponentRegistration {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(skeleton, "skeleton");
    }

    /** Under the component's own name. */
    public static ComponentRegistration of(Skeleton skeleton) {
        return new ComponentRegistration(skeleton.descriptor().name(), skeleton);
    }
}
