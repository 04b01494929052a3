package dev.retsu.testcontainers;

import java.net.URI;
import java.time.Duration;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * Retsu in a container, for suites that already run Testcontainers.
 *
 * <pre>{@code
 * @Container
 * static RetsuContainer retsu = new RetsuContainer("retsu:0.1.0");
 * SqsClient sqs = SqsClient.builder().endpointOverride(retsu.getEndpoint()) ...
 * }</pre>
 *
 * It listens on {@value #PORT} inside the container and is ready when {@code GET /health}
 * answers 200 (the image's own {@code retsu ready} line also says so).
 * Requires {@code org.testcontainers:testcontainers} on the test classpath (this artifact
 * declares it optional).
 */
public class RetsuContainer extends GenericContainer<RetsuContainer> {
    /** The port Retsu listens on in the container. */
    public static final int PORT = 9324;
    /** The image used by {@link #RetsuContainer()}. */
    public static final String DEFAULT_IMAGE = "retsu:latest";
    /** Default region of queues and signatures. */
    public static final String REGION = "us-east-1";
    /** Default account in queue URLs. */
    public static final String ACCOUNT_ID = "000000000000";

    private final DockerImageName imageName;
    private boolean frozenClock;

    /** The image {@value #DEFAULT_IMAGE} (build it with the project's Dockerfile). */
    public RetsuContainer() {
        this(DockerImageName.parse(DEFAULT_IMAGE));
    }

    public RetsuContainer(String image) {
        this(DockerImageName.parse(image));
    }

    public RetsuContainer(DockerImageName image) {
        super(image);
        this.imageName = image;
        withExposedPorts(PORT);
        withEnv("RETSU_HOST", "0.0.0.0");
        withEnv("RETSU_PORT", Integer.toString(PORT));
        waitingFor(Wait.forHttp("/health").forPort(PORT).forStatusCode(200)
                .withStartupTimeout(Duration.ofSeconds(30)));
    }

    /** Start with the clock frozen ({@code RETSU_CLOCK=frozen}). */
    public RetsuContainer withFrozenClock(boolean frozen) {
        this.frozenClock = frozen;
        if (frozen) {
            withEnv("RETSU_CLOCK", "frozen");
        } else {
            getEnvMap().remove("RETSU_CLOCK");
        }
        return self();
    }

    /** The image asked for (without resolving it, so without a container runtime). */
    public DockerImageName getImageName() {
        return imageName;
    }

    public boolean isFrozenClock() {
        return frozenClock;
    }

    /** The SQS endpoint as seen from the test JVM, e.g. {@code http://localhost:49153}. */
    public URI getEndpoint() {
        return endpointOf(getHost(), getMappedPort(PORT));
    }

    /** {@code {endpoint}/000000000000/{name}}. */
    public String getQueueUrl(String name) {
        return getEndpoint() + "/" + ACCOUNT_ID + "/" + name;
    }

    public String getRegion() {
        return REGION;
    }

    /** {@code http://host:port}, with IPv6 literals bracketed. */
    public static URI endpointOf(String host, int port) {
        String h = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
        return URI.create("http://" + h + ":" + port);
    }
}
