package dev.retsu.junit;

import java.nio.file.Paths;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * Starts Retsu for JUnit 5 tests and injects it as a {@link Retsu} parameter (test methods,
 * lifecycle methods, constructors).
 *
 * <p>By default one server serves a whole test class (nested classes share their outer class's);
 * {@code perTest} gives each test method its own. Configure it with {@link RetsuConfig} on the
 * class, or register it as a static field:
 *
 * <pre>{@code
 * @RegisterExtension
 * static RetsuExtension retsu = RetsuExtension.builder().frozenClock(true).build();
 * }</pre>
 *
 * A builder-registered extension uses the builder's options, not {@link RetsuConfig}.
 */
public final class RetsuExtension
        implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback, ParameterResolver {

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(RetsuExtension.class);
    private static final String SERVER = "server";
    private static final String OWNER = "owner";

    private final Settings fixed;

    /** Used by {@code @ExtendWith(RetsuExtension.class)} and {@link RetsuConfig}: reads {@link RetsuConfig}. */
    public RetsuExtension() {
        this(null);
    }

    private RetsuExtension(Settings fixed) {
        this.fixed = fixed;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The settings in force for this context: the builder's, else the nearest {@link RetsuConfig}, else defaults. */
    Settings settings(ExtensionContext context) {
        if (fixed != null) {
            return fixed;
        }
        Optional<ExtensionContext> c = Optional.of(context);
        while (c.isPresent()) {
            Optional<Class<?>> type = c.get().getTestClass();
            if (type.isPresent()) {
                Optional<RetsuConfig> cfg = findConfig(type.get());
                if (cfg.isPresent()) {
                    return Settings.of(cfg.get());
                }
            }
            c = c.get().getParent();
        }
        return new Settings(false, false, RetsuOptions.defaults());
    }

    private static Optional<RetsuConfig> findConfig(Class<?> type) {
        for (Class<?> t = type; t != null; t = t.getEnclosingClass()) {
            Optional<RetsuConfig> cfg = AnnotationSupport.findAnnotation(t, RetsuConfig.class);
            if (cfg.isPresent()) {
                return cfg;
            }
        }
        return Optional.empty();
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        Settings s = settings(context);
        if (s.perTest || server(context) != null) {
            return; // per test, or a nested class sharing its outer class's server
        }
        startIn(context, s);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        stopOwnedBy(context);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        Settings s = settings(context);
        Retsu shared = server(context);
        if (s.perTest || shared == null) {
            // per test; or registered where beforeAll does not run (an instance field): this test's own
            if (shared == null || context.getStore(NS).get(OWNER) == null) {
                startIn(context, s);
            }
            return;
        }
        if (s.resetBeforeEach) {
            shared.reset();
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        stopOwnedBy(context);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == Retsu.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext context) {
        Retsu r = server(context);
        if (r == null) {
            // e.g. a constructor parameter of a per-test server, resolved before beforeEach
            try {
                r = startIn(context, settings(context));
            } catch (RetsuException e) {
                throw new ParameterResolutionException("cannot start retsu: " + e.getMessage(), e);
            }
        }
        return r;
    }

    private static Retsu server(ExtensionContext context) {
        return context.getStore(NS).get(SERVER, Retsu.class);
    }

    private static Retsu startIn(ExtensionContext context, Settings s) {
        Retsu r = Retsu.start(s.options);
        ExtensionContext.Store store = context.getStore(NS);
        store.put(SERVER, r);
        store.put(OWNER, context.getUniqueId());
        return r;
    }

    /** Stops the server started in exactly this context (not one found in a parent's store). */
    private static void stopOwnedBy(ExtensionContext context) {
        ExtensionContext.Store store = context.getStore(NS);
        Object owner = store.get(OWNER);
        if (context.getUniqueId().equals(owner)) {
            Retsu r = store.remove(SERVER, Retsu.class);
            store.remove(OWNER);
            if (r != null) {
                r.stop();
            }
        }
    }

    record Settings(boolean perTest, boolean resetBeforeEach, RetsuOptions options) {
        static Settings of(RetsuConfig c) {
            RetsuOptions.Builder b = RetsuOptions.builder()
                    .frozenClock(c.frozenClock())
                    .tls(c.tls())
                    .args(c.args())
                    .startupTimeout(Duration.ofMillis(c.startupTimeoutMillis()));
            if (!c.config().isEmpty()) {
                b.config(Paths.get(c.config()));
            }
            return new Settings(c.perTest(), c.resetBeforeEach(), b.build());
        }
    }

    /** Builds a {@link RetsuExtension} for {@code @RegisterExtension}. */
    public static final class Builder {
        private boolean perTest;
        private boolean resetBeforeEach;
        private RetsuOptions.Builder options = RetsuOptions.builder();

        private Builder() {}

        /** A fresh server for every test method instead of one per test class. */
        public Builder perTest(boolean perTest) { this.perTest = perTest; return this; }

        /** Reset the shared server before each test. */
        public Builder resetBeforeEach(boolean reset) { this.resetBeforeEach = reset; return this; }

        /** Start with the clock frozen. */
        public Builder frozenClock(boolean frozen) { options.frozenClock(frozen); return this; }

        /** Extra command-line arguments for {@code retsu}. */
        public Builder args(String... args) { options.args(args); return this; }

        /** Start-up wait (default 10 s). */
        public Builder startupTimeout(Duration timeout) { options.startupTimeout(timeout); return this; }

        /** Every server option at once (replaces frozenClock/args/startupTimeout set before). */
        public Builder options(RetsuOptions o) { this.options = o.toBuilder(); return this; }

        public RetsuExtension build() {
            return new RetsuExtension(new Settings(perTest, resetBeforeEach, options.build()));
        }
    }
}
