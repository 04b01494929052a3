package example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.retsu.junit.Retsu;
import dev.retsu.junit.RetsuConfig;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.GetQueueAttributesResponse;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/** One server for the class, clock frozen, reset before each test. */
@RetsuConfig(frozenClock = true, resetBeforeEach = true)
class SqsFixtureTest {
    static SqsClient sqs;

    @BeforeAll
    static void client(Retsu retsu) {
        sqs = Sqs.client(retsu);
    }

    @AfterAll
    static void close() {
        sqs.close();
    }

    @BeforeEach
    void startsEmpty(Retsu retsu) {
        // resetBeforeEach: no queue of an earlier test is left, and the clock is frozen again
        assertEquals(List.of(), sqs.listQueues().queueUrls());
        assertTrue(retsu.clock().isFrozen());
    }

    private String createQueue(String name, Map<QueueAttributeName, String> attributes) {
        return sqs.createQueue(b -> b.queueName(name).attributes(attributes)).queueUrl();
    }

    private List<Message> receive(String url) {
        return sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10)
                .messageSystemAttributeNames(MessageSystemAttributeName.ALL)).messages();
    }

    @Test
    void sendAndReceive(Retsu retsu) {
        String url = createQueue("orders", Map.of());
        assertEquals(retsu.queueUrl("orders"), url);
        String id = sqs.sendMessage(b -> b.queueUrl(url).messageBody("hello")).messageId();
        List<Message> got = receive(url);
        assertEquals(1, got.size());
        assertEquals("hello", got.get(0).body());
        assertEquals(id, got.get(0).messageId());
        sqs.deleteMessage(b -> b.queueUrl(url).receiptHandle(got.get(0).receiptHandle()));
        assertEquals(List.of(), retsu.peek("orders"));
    }

    @Test
    void visibilityTimeoutPassesOnlyWhenTheClockIsAdvanced(Retsu retsu) {
        String url = createQueue("jobs", Map.of(QueueAttributeName.VISIBILITY_TIMEOUT, "30"));
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("job-1"));
        List<Message> first = receive(url);
        assertEquals("1", first.get(0).attributes().get(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT));

        retsu.clock().advance(Duration.ofSeconds(29));
        assertEquals(List.of(), receive(url), "still in flight at 29 s");

        retsu.clock().advance(Duration.ofSeconds(2));
        List<Message> again = receive(url);
        assertEquals(1, again.size());
        assertEquals(first.get(0).messageId(), again.get(0).messageId());
        assertEquals("2", again.get(0).attributes().get(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT));
    }

    @Test
    void receivesAloneDriveAMessageIntoTheDeadLetterQueue(Retsu retsu) {
        String dlq = createQueue("jobs-dlq", Map.of());
        String dlqArn = sqs.getQueueAttributes(b -> b.queueUrl(dlq).attributeNames(QueueAttributeName.QUEUE_ARN))
                .attributes().get(QueueAttributeName.QUEUE_ARN);
        String url = createQueue("jobs", Map.of(
                QueueAttributeName.VISIBILITY_TIMEOUT, "10",
                QueueAttributeName.REDRIVE_POLICY,
                "{\"deadLetterTargetArn\":\"" + dlqArn + "\",\"maxReceiveCount\":\"2\"}"));
        String id = sqs.sendMessage(b -> b.queueUrl(url).messageBody("poison")).messageId();

        for (int i = 1; i <= 2; i++) {
            List<Message> got = receive(url);
            assertEquals(1, got.size(), "receive " + i);
            retsu.clock().advance(Duration.ofSeconds(11));
        }
        assertEquals(List.of(), receive(url), "the third receive moves it to the DLQ instead");

        List<Map<String, Object>> dead = retsu.peek("jobs-dlq");
        assertEquals(1, dead.size());
        assertEquals(id, dead.get(0).get("message_id"));
        assertTrue(String.valueOf(dead.get(0).get("dead_letter_source_arn")).endsWith(":jobs"), dead.toString());
        List<Message> fromDlq = receive(dlq);
        assertEquals("poison", fromDlq.get(0).body());

        @SuppressWarnings("unchecked")
        List<Map<String, Object>> events = (List<Map<String, Object>>) retsu.history(id).get("events");
        assertTrue(events.size() >= 4, "sent, received twice, moved: " + events);
        assertEquals("sent", events.get(0).get("kind"));
    }

    @Test
    void peekChangesNothing(Retsu retsu) {
        String url = createQueue("peeked", Map.of(QueueAttributeName.VISIBILITY_TIMEOUT, "60"));
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("a"));
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("b"));
        List<Message> taken = sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(1)).messages();
        assertEquals(1, taken.size());

        for (int i = 0; i < 3; i++) {
            List<Map<String, Object>> peeked = retsu.peek("peeked");
            assertEquals(2, peeked.size());
            assertEquals(List.of("available", "inflight"),
                    peeked.stream().map(m -> (String) m.get("state")).sorted().toList());
            for (Map<String, Object> m : peeked) {
                assertTrue(m.get("receive_count") instanceof Long, "numbers are longs: " + m);
            }
        }

        GetQueueAttributesResponse attrs = sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNames(
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE));
        assertEquals("1", attrs.attributes().get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES));
        assertEquals("1", attrs.attributes().get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE));

        List<Message> rest = receive(url);
        assertEquals(1, rest.size(), "peeking made nothing in flight and hid nothing");
        assertFalse(rest.get(0).messageId().equals(taken.get(0).messageId()));
        assertEquals("1", rest.get(0).attributes().get(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT),
                "peeking counted no receive");
    }

    @Test
    void resetDeletesEverything(Retsu retsu) {
        String url = createQueue("gone", Map.of());
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("x"));
        retsu.clock().advance(Duration.ofHours(1));
        retsu.reset();
        assertEquals(List.of(), sqs.listQueues().queueUrls());
        assertTrue(retsu.clock().isFrozen());
    }
}
