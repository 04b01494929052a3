package example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.retsu.junit.Retsu;
import dev.retsu.junit.RetsuConfig;
import dev.retsu.junit.RetsuExtension;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.services.sqs.SqsClient;

class PerTestAndRegisteredTest {
    static final List<Retsu> SERVERS = new ArrayList<>();

    @AfterAll
    static void everyServerWasStopped() {
        assertEquals(4, SERVERS.size());
        assertTrue(SERVERS.stream().noneMatch(Retsu::isRunning), "the extension stopped each server");
    }

    /** A fresh server per test: a queue made in one test is not there in the next. */
    @Nested
    @RetsuConfig(perTest = true)
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    class PerTest {
        static URI first;

        @Test @Order(1)
        void makesAQueue(Retsu retsu) {
            SERVERS.add(retsu);
            first = retsu.endpoint();
            try (SqsClient sqs = Sqs.client(retsu)) {
                sqs.createQueue(b -> b.queueName("only-here"));
                assertEquals(1, sqs.listQueues().queueUrls().size());
            }
        }

        @Test @Order(2)
        void getsItsOwnServer(Retsu retsu) {
            SERVERS.add(retsu);
            assertNotEquals(first, retsu.endpoint());
            try (SqsClient sqs = Sqs.client(retsu)) {
                assertEquals(List.of(), sqs.listQueues().queueUrls());
            }
        }
    }

    /** Registered through the builder: one server for the class, clock running. */
    @Nested
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    class Registered {
        @RegisterExtension
        static RetsuExtension ext = RetsuExtension.builder().args("--strict-timing").build();

        @Test @Order(1)
        void one(Retsu retsu) {
            SERVERS.add(retsu);
            assertFalse(retsu.clock().isFrozen());
        }

        @Test @Order(2)
        void two(Retsu retsu) {
            SERVERS.add(retsu);
            assertEquals(SERVERS.get(SERVERS.size() - 2), retsu, "shared within the class");
        }
    }
}
