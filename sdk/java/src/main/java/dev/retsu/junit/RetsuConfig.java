package dev.retsu.junit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Registers {@link RetsuExtension} on a test class and configures it.
 *
 * <pre>{@code
 * @RetsuConfig(frozenClock = true)
 * class OrdersTest {
 *     @Test void works(Retsu retsu) { ... }
 * }
 * }</pre>
 */
@Target({ElementType.TYPE, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(RetsuExtension.class)
public @interface RetsuConfig {
    /** A fresh server for every test method instead of one per test class. */
    boolean perTest() default false;

    /** Start with the clock frozen ({@code --clock frozen}). */
    boolean frozenClock() default false;

    /** Reset the shared server (every queue and message deleted) before each test. */
    boolean resetBeforeEach() default false;

    /** Extra command-line arguments for {@code retsu}. */
    String[] args() default {};

    /** A Retsu configuration file ({@code --config}); relative paths are against the working directory. */
    String config() default "";

    /** Answer TLS too ({@code --tls}): an {@code https://} endpoint, see {@link Retsu#caCertificate()}. */
    boolean tls() default false;

    /** Start-up wait in milliseconds (default 10 000). */
    long startupTimeoutMillis() default 10_000;
}
