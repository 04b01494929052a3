package dev.retsu.compat;

import static dev.retsu.compat.Harness.*;

import java.net.URI;
import java.util.*;

import com.amazon.sqs.javamessaging.AmazonSQSMessagingClientWrapper;
import com.amazon.sqs.javamessaging.ProviderConfiguration;
import com.amazon.sqs.javamessaging.SQSConnection;
import com.amazon.sqs.javamessaging.SQSConnectionFactory;
import jakarta.jms.*;
import jakarta.jms.Queue;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.sqs.model.ReceiveMessageRequest;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.CreateQueueRequest;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;

/**
 * The Amazon SQS Java Messaging Library (JMS 3.1 over AWS SDK v2, JSON)
 * against a fresh retsu: producers and consumers on a standard and a FIFO
 * queue, typed JMS properties as message attributes, CLIENT_ACKNOWLEDGE
 * (acknowledging deletes every message the session received, in a
 * DeleteMessageBatch), Session.recover (returns the unacknowledged ones,
 * ChangeMessageVisibilityBatch to 0), delivery delay, and redrive to a DLQ.
 *
 *   java -cp ... dev.retsu.compat.Jms <endpoint> <results.json>
 */
public final class Jms {
    static String endpoint;
    static SqsClient sqs;
    static SQSConnection conn;
    static AmazonSQSMessagingClientWrapper wrapper;
    static final List<String> created = new ArrayList<>();

    static String createQueue(String stem, Map<QueueAttributeName, String> attrs) throws JMSException {
        boolean fifo = "true".equals(attrs.get(QueueAttributeName.FIFO_QUEUE));
        String name = name(stem) + (fifo ? ".fifo" : "");
        String url = wrapper.createQueue(CreateQueueRequest.builder().queueName(name).attributes(attrs).build()).queueUrl();
        created.add(url);
        return name;
    }

    static Session clientAck() throws JMSException { return conn.createSession(false, Session.CLIENT_ACKNOWLEDGE); }

    static List<String> texts(List<Message> ms) throws JMSException {
        List<String> out = new ArrayList<>();
        for (Message m : ms) out.add(((TextMessage) m).getText());
        return out;
    }

    static List<Message> receiveN(MessageConsumer c, int n, long ms) throws JMSException {
        List<Message> out = new ArrayList<>();
        long deadline = System.currentTimeMillis() + ms;
        while (out.size() < n && System.currentTimeMillis() < deadline) {
            Message m = c.receive(Math.max(1, deadline - System.currentTimeMillis()));
            if (m != null) out.add(m);
        }
        return out;
    }

    static String count(String queue, String attr) {
        String url = sqs.getQueueUrl(b -> b.queueName(queue)).queueUrl();
        return sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNamesWithStrings(attr)).attributesAsStrings().get(attr);
    }

    // ------------------------------------------------------------------ scenarios

    static Object queueLifecycle() throws Exception {
        String name = name("jms-life");
        check(!wrapper.queueExists(name), "queueExists before creation");
        String url = wrapper.createQueue(name).queueUrl();
        created.add(url);
        check(wrapper.queueExists(name), "queueExists after creation");
        eq(wrapper.getQueueUrl(name).queueUrl(), url, "getQueueUrl");
        Session s = clientAck();
        Queue q = s.createQueue(name);
        eq(q.getQueueName(), name, "Session.createQueue name");
        s.close();
        return "queueExists/createQueue/getQueueUrl through the wrapper, Session.createQueue resolves it";
    }

    static Object sendReceiveDeleteAttributes() throws Exception {
        String name = createQueue("jms-srd", Map.of());
        Session s = clientAck();
        Queue q = s.createQueue(name);
        MessageProducer p = s.createProducer(q);
        String body = "h\u00e9llo <w\u00f6rld> & \"quotes\" \u2713 \ud83d\ude00";
        TextMessage m = s.createTextMessage(body);
        m.setStringProperty("s", "hello \u2713");
        m.setIntProperty("i", 42);
        m.setBooleanProperty("flag", true);
        m.setDoubleProperty("d", 2.5);
        m.setLongProperty("l", 1L << 40);
        p.send(m);
        check(m.getJMSMessageID() != null && m.getJMSMessageID().startsWith("ID:"), "JMSMessageID " + m.getJMSMessageID());
        BytesMessage bm = s.createBytesMessage();
        bm.writeBytes(new byte[] {0, 1, (byte) 254, (byte) 255});
        p.send(bm);
        ObjectMessage om = s.createObjectMessage(new ArrayList<>(List.of("a", 1)));
        p.send(om);
        MessageConsumer c = s.createConsumer(q);
        conn.start();
        List<Message> got = receiveN(c, 3, 5000);
        eq(got.size(), 3, "messages received");
        Map<String, Message> byId = new HashMap<>();
        for (Message x : got) byId.put(x.getJMSMessageID(), x);
        TextMessage r = (TextMessage) byId.get(m.getJMSMessageID());
        check(r != null, "the TextMessage was not received under its JMSMessageID");
        eq(r.getText(), body, "text round trip");
        eq(r.getStringProperty("s"), "hello \u2713", "String property");
        eq(r.getIntProperty("i"), 42, "int property (Number.int attribute)");
        eq(r.getBooleanProperty("flag"), true, "boolean property (Number.Boolean attribute)");
        eq(r.getDoubleProperty("d"), 2.5, "double property (Number.double attribute)");
        eq(r.getLongProperty("l"), 1L << 40, "long property (Number.long attribute)");
        eq(r.getIntProperty("JMSXDeliveryCount"), 1, "JMSXDeliveryCount");
        BytesMessage rb = (BytesMessage) byId.get(bm.getJMSMessageID());
        byte[] buf = new byte[(int) rb.getBodyLength()];
        rb.readBytes(buf);
        eq(Arrays.toString(buf), Arrays.toString(new byte[] {0, 1, (byte) 254, (byte) 255}), "BytesMessage body");
        eq(((ObjectMessage) byId.get(om.getJMSMessageID())).getObject(), List.of("a", 1), "ObjectMessage body");
        eq(count(name, "ApproximateNumberOfMessagesNotVisible"), "3", "in flight before acknowledge");
        got.get(got.size() - 1).acknowledge(); // CLIENT_ACKNOWLEDGE: acknowledges all received so far
        check(within(3000, () -> "0".equals(count(name, "ApproximateNumberOfMessagesNotVisible"))), "acknowledge did not delete the messages");
        eq(count(name, "ApproximateNumberOfMessages"), "0", "visible after acknowledge");
        s.close();
        return "Text/Bytes/Object messages, String/int/boolean/double/long properties as typed attributes (SDK MD5 checks on), acknowledge deletes";
    }

    static Object batchesPartialFailure() throws Exception {
        String name = createQueue("jms-batch", Map.of(QueueAttributeName.VISIBILITY_TIMEOUT, "30"));
        Session s = clientAck();
        Queue q = s.createQueue(name);
        MessageProducer p = s.createProducer(q);
        for (int i = 0; i < 6; i++) p.send(s.createTextMessage("m" + i));
        MessageConsumer c = s.createConsumer(q);
        conn.start();
        List<Message> got = receiveN(c, 6, 5000);
        eq(got.size(), 6, "received");
        s.recover(); // ChangeMessageVisibilityBatch to 0 for everything unacknowledged (the 30 s timeout has not run out)
        List<Message> again = receiveN(c, 6, 5000);
        eq(again.size(), 6, "received after recover");
        for (Message m : again) eq(m.getIntProperty("JMSXDeliveryCount"), 2, "JMSXDeliveryCount after recover");
        again.get(5).acknowledge(); // DeleteMessageBatch for all six
        check(within(3000, () -> "0".equals(count(name, "ApproximateNumberOfMessagesNotVisible"))), "acknowledge did not delete all six");
        s.close();
        return "6 messages: Session.recover (ChangeMessageVisibilityBatch) returned all, acknowledge deleted all (DeleteMessageBatch); "
                + "JMS has no batch send and cannot express a partial batch failure";
    }

    static Object visibilityChangeRelease() throws Exception {
        String name = createQueue("jms-vis", Map.of(QueueAttributeName.VISIBILITY_TIMEOUT, "1"));
        Session s = clientAck();
        Queue q = s.createQueue(name);
        s.createProducer(q).send(s.createTextMessage("v"));
        MessageConsumer c = s.createConsumer(q);
        conn.start();
        Message first = c.receive(5000);
        check(first != null, "first receive");
        long t0 = System.currentTimeMillis();
        s.close(); // closing without acknowledging leaves the message in flight until its 1 s timeout
        Session s2 = clientAck();
        MessageConsumer c2 = s2.createConsumer(s2.createQueue(name));
        Message second = c2.receive(5000);
        long gap = System.currentTimeMillis() - t0;
        check(second != null, "message did not come back after its visibility timeout");
        eq(second.getJMSMessageID(), first.getJMSMessageID(), "same message redelivered");
        check(second.getJMSRedelivered(), "JMSRedelivered on the 2nd delivery");
        second.acknowledge();
        s2.close();
        return "unacknowledged message came back after the queue's 1 s visibility timeout (" + gap + " ms), JMSRedelivered set; "
                + "released at once by Session.recover in batches_partial_failure";
    }

    static Object delay() throws Exception {
        String name = createQueue("jms-delay", Map.of());
        Session s = clientAck();
        Queue q = s.createQueue(name);
        MessageProducer p = s.createProducer(q);
        p.setDeliveryDelay(1000);
        long t0 = System.currentTimeMillis();
        p.send(s.createTextMessage("later"));
        eq(count(name, "ApproximateNumberOfMessagesDelayed"), "1", "ApproximateNumberOfMessagesDelayed");
        MessageConsumer c = s.createConsumer(q);
        conn.start();
        Message m = c.receive(5000);
        long at = System.currentTimeMillis() - t0;
        check(m != null, "delayed message never arrived");
        check(at >= 900, "delayed message arrived after " + at + " ms");
        m.acknowledge();
        s.close();
        return "MessageProducer.setDeliveryDelay(1000) -> DelaySeconds 1: received after " + at + " ms";
    }

    static Object longPolling() throws Exception {
        String name = createQueue("jms-lp", Map.of());
        Session s = clientAck();
        Queue q = s.createQueue(name);
        MessageConsumer c = s.createConsumer(q);
        conn.start();
        sleep(300); // the consumer's prefetch thread is now in a (3 s, see CapLongPoll) long poll on the empty queue
        Session ps = clientAck();
        long t = System.currentTimeMillis();
        ps.createProducer(ps.createQueue(name)).send(ps.createTextMessage("wake up"));
        Message m = c.receive(5000);
        long woke = System.currentTimeMillis() - t;
        check(m != null, "message not delivered to the waiting consumer");
        check(woke < 1500, "delivered " + woke + " ms after the send (the waiting long poll must wake)");
        m.acknowledge();
        s.close();
        ps.close();
        return "a send woke the consumer's waiting long poll after " + woke + " ms";
    }

    static Object fifo() throws Exception {
        String name = createQueue("jms-fifo", Map.of(QueueAttributeName.FIFO_QUEUE, "true"));
        Session s = clientAck();
        Queue q = s.createQueue(name);
        MessageProducer p = s.createProducer(q);
        List<String> seqs = new ArrayList<>();
        for (String b : List.of("a1", "a2", "a3", "a1")) {
            TextMessage m = s.createTextMessage(b);
            m.setStringProperty("JMSXGroupID", "g1");
            m.setStringProperty("JMS_SQS_DeduplicationId", b);
            p.send(m);
            seqs.add(m.getStringProperty("JMS_SQS_SequenceNumber"));
        }
        check(seqs.get(0) != null && new java.math.BigInteger(seqs.get(0)).compareTo(new java.math.BigInteger(seqs.get(1))) < 0, "sequence numbers " + seqs);
        MessageConsumer c = s.createConsumer(q);
        conn.start();
        // The group stays locked while a message of it is in flight: acknowledge each to get the next.
        List<Message> got = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Message r = c.receive(5000);
            check(r != null, "FIFO delivery " + (i + 1) + " after acknowledging the previous (got " + texts(got) + ")");
            got.add(r);
            r.acknowledge();
        }
        eq(texts(got), List.of("a1", "a2", "a3"), "FIFO order, duplicate dropped");
        eq(got.get(0).getStringProperty("JMSXGroupID"), "g1", "JMSXGroupID");
        eq(got.get(0).getStringProperty("JMS_SQS_DeduplicationId"), "a1", "JMS_SQS_DeduplicationId");
        check(c.receive(700) == null, "more than three messages (the duplicate was delivered)");
        s.close();
        return "FIFO producer/consumer: group order, JMSXGroupID, deduplication id, sequence numbers";
    }

    static Object deadLetter() throws Exception {
        String dlq = createQueue("jms-dlq", Map.of());
        String dlqUrl = wrapper.getQueueUrl(dlq).queueUrl();
        String dlqArn = sqs.getQueueAttributes(b -> b.queueUrl(dlqUrl).attributeNamesWithStrings("QueueArn")).attributesAsStrings().get("QueueArn");
        String src = createQueue("jms-src", Map.of(QueueAttributeName.REDRIVE_POLICY,
                "{\"deadLetterTargetArn\":\"" + dlqArn + "\",\"maxReceiveCount\":2}"));
        Session s = clientAck();
        Queue q = s.createQueue(src);
        TextMessage m = s.createTextMessage("poison");
        s.createProducer(q).send(m);
        MessageConsumer c = s.createConsumer(q);
        conn.start();
        for (int i = 1; i <= 2; i++) {
            Message r = c.receive(5000);
            check(r != null, "delivery " + i);
            s.recover(); // a failed processing attempt: back to the queue at once
        }
        check(c.receive(1500) == null, "delivered a 3rd time past maxReceiveCount 2");
        s.close();
        Session ds = clientAck();
        MessageConsumer dc = ds.createConsumer(ds.createQueue(dlq));
        Message d = dc.receive(5000);
        check(d != null, "nothing in the dead-letter queue");
        eq(d.getJMSMessageID(), m.getJMSMessageID(), "dead-lettered message id");
        eq(((TextMessage) d).getText(), "poison", "dead-lettered text");
        d.acknowledge();
        ds.close();
        return "two failed deliveries (Session.recover) then the redrive policy moved it to the DLQ, consumed there "
                + "(message move tasks have no JMS API)";
    }

    static Object errorsTyped() throws Exception {
        Session s = clientAck();
        try {
            s.createQueue(name("missing"));
            throw new Fail("Session.createQueue on a missing queue succeeded");
        } catch (JMSException e) {
            Throwable t = e;
            while (t != null && !(t instanceof QueueDoesNotExistException)) t = t.getCause();
            check(e instanceof InvalidDestinationException, "expected InvalidDestinationException, got " + e);
            check(t != null, "cause lacks QueueDoesNotExistException: " + e);
            return "Session.createQueue on a missing queue: InvalidDestinationException caused by QueueDoesNotExistException";
        } finally {
            s.close();
        }
    }

    /**
     * The library's consumers long-poll for 20 s and closing a session waits
     * for that poll to return; capping the wait at 3 s keeps the suite fast
     * (every closed session would otherwise cost up to 20 s) while a waiting
     * poll is still long enough to show that a send wakes it.
     */
    static final class CapLongPoll implements ExecutionInterceptor {
        @Override
        public SdkRequest modifyRequest(Context.ModifyRequest context, ExecutionAttributes attributes) {
            if (context.request() instanceof ReceiveMessageRequest r && r.waitTimeSeconds() != null && r.waitTimeSeconds() > 3) {
                return r.toBuilder().waitTimeSeconds(3).build();
            }
            return context.request();
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) { System.err.println("usage: Jms <endpoint> <results.json>"); System.exit(2); }
        endpoint = args[0].replaceAll("/+$", "");
        sqs = SqsClient.builder().endpointOverride(URI.create(endpoint)).region(Region.US_EAST_1)
                .overrideConfiguration(o -> o.addExecutionInterceptor(new CapLongPoll()))
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("AKIAIOSFODNN7EXAMPLE", "secret"))).build();
        SQSConnectionFactory factory = new SQSConnectionFactory(new ProviderConfiguration(), sqs);
        conn = factory.createConnection();
        wrapper = conn.getWrappedAmazonSQSClient();
        Map<String, Scenario> s = new LinkedHashMap<>();
        s.put("queue_lifecycle", Jms::queueLifecycle);
        s.put("list_queues_pagination", () -> new NotApplicable("JMS has no ListQueues API"));
        s.put("send_receive_delete_attributes", Jms::sendReceiveDeleteAttributes);
        s.put("batches_partial_failure", Jms::batchesPartialFailure);
        s.put("visibility_change_release", Jms::visibilityChangeRelease);
        s.put("delay", Jms::delay);
        s.put("long_polling", Jms::longPolling);
        s.put("fifo_order_group_lock_dedup", Jms::fifo);
        s.put("dead_letter_and_move_task", Jms::deadLetter);
        s.put("tags", () -> new NotApplicable("JMS has no queue tagging API"));
        s.put("errors_typed", Jms::errorsTyped);
        int rc = Harness.run("amazon-sqs-java-messaging-lib (JMS)", jarVersion(SQSConnectionFactory.class, "?"), "json",
                Map.of("awssdk", software.amazon.awssdk.core.util.VersionInfo.SDK_VERSION, "jms_api", "jakarta.jms 3.1"),
                args[1], s, () -> {
                    for (String u : created) { try { sqs.deleteQueue(b -> b.queueUrl(u)); } catch (Exception ignored) { } }
                    created.clear();
                });
        try {
            conn.close();
        } catch (JMSException e) {
            System.err.println("closing the JMS connection: " + e); // its queues are already deleted
        }
        System.exit(rc);
    }
}
