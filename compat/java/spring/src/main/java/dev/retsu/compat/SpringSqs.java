package dev.retsu.compat;

import static dev.retsu.compat.Harness.*;

import java.net.URI;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import io.awspring.cloud.sqs.annotation.SqsListener;
import io.awspring.cloud.sqs.listener.QueueNotFoundStrategy;
import io.awspring.cloud.sqs.listener.Visibility;
import io.awspring.cloud.sqs.operations.SendBatchOperationFailedException;
import io.awspring.cloud.sqs.operations.SendResult;
import io.awspring.cloud.sqs.operations.SqsTemplate;
import org.springframework.boot.SpringApplication;
import io.awspring.cloud.autoconfigure.sns.SnsClientCustomizer;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.messaging.Message;
import org.springframework.messaging.support.MessageBuilder;
import org.springframework.stereotype.Component;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sns.model.PublishResponse;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;

/**
 * Spring Cloud AWS SQS (io.awspring.cloud, on Spring Boot) against a fresh
 * retsu: SqsTemplate sends and receives, and @SqsListener methods receive,
 * acknowledge (delete on success), change visibility, and on an exception
 * leave the message to come back until the redrive policy moves it to a
 * dead-letter queue. Spring's SqsAsyncClient (AWS SDK v2) speaks JSON.
 * The queues the listeners watch are created before the context starts
 * (a listener container resolves its queue at start-up).
 *
 *   java -cp ... dev.retsu.compat.SpringSqs <endpoint> <results.json> [<sns-results.json>]
 *
 * With the third argument the SNS scenarios follow in the same context:
 * Spring Cloud AWS SNS's SnsTemplate publishes (the autoconfigured
 * SnsClient sets up topics and SQS subscriptions), and SqsTemplate reads
 * what the queues got. SnsTemplate returns nothing from a publish, so an
 * interceptor on that SnsClient records each Publish's MessageId, to hold
 * the delivered envelope against.
 */
@SpringBootApplication
public class SpringSqs {
    static String endpoint;
    static SqsClient admin; // plain SDK v2 client, to set up queues and look behind the framework
    static SqsTemplate template;
    static final Map<String, String> Q = new HashMap<>();

    /** What the listeners saw, by queue role. */
    @Component
    public static class Listeners {
        final BlockingQueue<Message<String>> acked = new LinkedBlockingQueue<>();
        final BlockingQueue<Long> failedAt = new LinkedBlockingQueue<>();
        final BlockingQueue<String> visibility = new LinkedBlockingQueue<>();
        final BlockingQueue<String> fifo = new LinkedBlockingQueue<>();
        final AtomicInteger visibilityCalls = new AtomicInteger();

        @SqsListener("${retsu.queue.ack}")
        public void ack(Message<String> m) { acked.add(m); }

        @SqsListener("${retsu.queue.fail}")
        public void fail(String body) {
            failedAt.add(System.currentTimeMillis());
            throw new IllegalStateException("listener failure on purpose: " + body);
        }

        /** 1st delivery: shorten the visibility to 1 s and fail; 2nd: succeed. */
        @SqsListener("${retsu.queue.vis}")
        public void vis(String body, Visibility v) {
            if (visibilityCalls.incrementAndGet() == 1) {
                v.changeTo(1);
                visibility.add("first " + System.currentTimeMillis());
                throw new IllegalStateException("come back in 1 s");
            }
            visibility.add("second " + System.currentTimeMillis());
        }

        @SqsListener("${retsu.queue.fifo}")
        public void fifo(String body) { fifo.add(body); }
    }

    static Listeners listeners;

    /** The MessageId of every Publish the autoconfigured SnsClient (under SnsTemplate) got back. */
    static final List<String> publishedIds = Collections.synchronizedList(new ArrayList<>());

    @Bean
    SnsClientCustomizer retsuPublishCapture() {
        ExecutionInterceptor capture = new ExecutionInterceptor() {
            @Override
            public void afterExecution(Context.AfterExecution ctx, ExecutionAttributes attrs) {
                if (ctx.response() instanceof PublishResponse p) publishedIds.add(p.messageId());
            }
        };
        return b -> b.overrideConfiguration(b.overrideConfiguration().toBuilder().addExecutionInterceptor(capture).build());
    }

    static String url(String role) { return Q.get(role); }

    static String nameOf(String url) { return url.substring(url.lastIndexOf('/') + 1); }

    static String make(String stem, Map<String, String> attrs) {
        String n = name(stem) + ("true".equals(attrs.get("FifoQueue")) ? ".fifo" : "");
        return admin.createQueue(b -> b.queueName(n).attributesWithStrings(attrs)).queueUrl();
    }

    static <T> T poll(BlockingQueue<T> q, long ms, String what) throws InterruptedException {
        T v = q.poll(ms, TimeUnit.MILLISECONDS);
        check(v != null, what + ": nothing within " + ms + " ms");
        return v;
    }

    // ------------------------------------------------------------------ scenarios

    static Object queueLifecycle() {
        // The framework's queue management: resolve a queue by name, create it on first use.
        String fresh = name("spring-created");
        SqsTemplate creating = SqsTemplate.builder().sqsAsyncClient(asyncClient())
                .configure(o -> o.queueNotFoundStrategy(QueueNotFoundStrategy.CREATE)).build();
        SendResult<String> r = creating.send(to -> to.queue(fresh).payload("first"));
        String url = admin.getQueueUrl(b -> b.queueName(fresh)).queueUrl();
        eq(r.endpoint(), fresh, "SendResult endpoint");
        Optional<Message<String>> got = creating.receive(from -> from.queue(fresh), String.class);
        eq(got.map(Message::getPayload).orElse(null), "first", "receive by queue name");
        admin.deleteQueue(b -> b.queueUrl(url));
        return "QueueNotFoundStrategy.CREATE created the queue on first send; resolved by name for receive";
    }

    static Object sendReceiveDeleteAttributes() throws Exception {
        String body = "h\u00e9llo <w\u00f6rld> & \"quotes\" \u2713";
        byte[] bin = {0, 1, (byte) 254};
        SendResult<String> sent = template.send(to -> to.queue(url("ack")).payload(body)
                .header("s", "hello \u2713").header("n", 42).header("b", java.nio.ByteBuffer.wrap(bin)));
        check(sent.messageId() != null, "SendResult has no message id");
        Message<String> m = poll(listeners.acked, 5000, "@SqsListener delivery");
        eq(m.getPayload(), body, "payload through @SqsListener");
        eq(m.getHeaders().get("s"), "hello \u2713", "String header back from a String attribute");
        eq(m.getHeaders().get("n"), 42, "Number header back (attribute type Number.java.lang.Integer)");
        Object hb = m.getHeaders().get("b");
        byte[] back = hb instanceof software.amazon.awssdk.core.SdkBytes sb ? sb.asByteArray()
                : hb instanceof java.nio.ByteBuffer bb ? Harness.bytes(bb) : null;
        check(back != null, "ByteBuffer header came back as " + (hb == null ? "nothing" : hb.getClass().getName()));
        eq(Arrays.toString(back), Arrays.toString(bin), "ByteBuffer header back from a Binary attribute");
        eq(m.getHeaders().getId(), sent.messageId(), "message id (MessageHeaders.ID)");
        // Acknowledged = deleted: nothing left, visible or in flight.
        check(within(3000, () -> "0".equals(admin.getQueueAttributes(b -> b.queueUrl(url("ack"))
                .attributeNamesWithStrings("ApproximateNumberOfMessagesNotVisible")).attributesAsStrings().get("ApproximateNumberOfMessagesNotVisible"))),
                "the listener's acknowledgement did not delete the message");
        eq(admin.getQueueAttributes(b -> b.queueUrl(url("ack")).attributeNamesWithStrings("ApproximateNumberOfMessages"))
                .attributesAsStrings().get("ApproximateNumberOfMessages"), "0", "visible messages after the acknowledgement");
        // SqsTemplate.receive (with its own acknowledgement) on a queue with no listener.
        String plain = make("spring-plain", Map.of());
        template.send(to -> to.queue(plain).payload("via template").header("k", "v"));
        Optional<Message<String>> r = template.receive(from -> from.queue(plain), String.class);
        check(r.isPresent(), "SqsTemplate.receive got nothing");
        eq(r.get().getPayload(), "via template", "SqsTemplate.receive payload");
        eq(r.get().getHeaders().get("k"), "v", "SqsTemplate.receive header");
        eq(admin.receiveMessage(b -> b.queueUrl(plain)).messages().size(), 0, "message left after SqsTemplate.receive acknowledged it");
        admin.deleteQueue(b -> b.queueUrl(plain));
        return "String/Number/Binary headers as message attributes both ways (SDK MD5 checks on), listener ack deletes, template receive acks";
    }

    static Object batchesPartialFailure() {
        String q = make("spring-batch", Map.of("MaximumMessageSize", "1024"));
        List<Message<String>> batch = List.of(MessageBuilder.withPayload("one").build(), MessageBuilder.withPayload("two").build());
        var ok = template.sendMany(q, batch);
        eq(ok.successful().size(), 2, "sendMany successful");
        try {
            template.sendMany(q, List.of(MessageBuilder.withPayload("fits").build(), MessageBuilder.withPayload("x".repeat(2000)).build()));
            throw new Fail("sendMany with an oversized message did not report it");
        } catch (SendBatchOperationFailedException e) {
            var res = e.getSendBatchResult(String.class);
            eq(res.successful().size(), 1, "partial failure: successful entries");
            eq(res.failed().size(), 1, "partial failure: failed entries");
            eq(res.failed().iterator().next().message().getPayload().length(), 2000, "the failed entry is the oversized one");
        }
        Collection<Message<String>> got = new ArrayList<>();
        within(3000, () -> { got.addAll(template.receiveMany(from -> from.queue(q).maxNumberOfMessages(10), String.class)); return got.size() >= 3; });
        eq(got.stream().map(Message::getPayload).sorted().collect(Collectors.toList()), List.of("fits", "one", "two"), "received batch");
        admin.deleteQueue(b -> b.queueUrl(q));
        return "sendMany (SendMessageBatch) ok; partial failure surfaces as SendBatchOperationFailedException; receiveMany acks in a batch";
    }

    static Object visibilityChangeRelease() throws Exception {
        template.send(to -> to.queue(url("vis")).payload("v"));
        String first = poll(listeners.visibility, 5000, "first delivery");
        String second = poll(listeners.visibility, 5000, "second delivery after Visibility.changeTo(1)");
        long gap = Long.parseLong(second.split(" ")[1]) - Long.parseLong(first.split(" ")[1]);
        check(first.startsWith("first") && second.startsWith("second"), first + " / " + second);
        // The queue's VisibilityTimeout is 30 s: only the listener's changeTo(1) can bring it back this soon.
        check(gap >= 800 && gap < 4000, "redelivered " + gap + " ms after Visibility.changeTo(1)");
        return "Visibility.changeTo(1) in the listener: redelivered after " + gap + " ms (queue timeout 30 s), then acknowledged";
    }

    static Object delay() {
        String q = make("spring-delay", Map.of());
        long t0 = System.currentTimeMillis();
        template.send(to -> to.queue(q).payload("later").delaySeconds(1));
        eq(template.receive(from -> from.queue(q).pollTimeout(Duration.ofSeconds(0)), String.class).isPresent(), false, "visible before the delay");
        Optional<Message<String>> m = template.receive(from -> from.queue(q).pollTimeout(Duration.ofSeconds(3)), String.class);
        long at = System.currentTimeMillis() - t0;
        eq(m.map(Message::getPayload).orElse(null), "later", "delayed message");
        check(at >= 900, "delayed message arrived after " + at + " ms");
        admin.deleteQueue(b -> b.queueUrl(q));
        return "delaySeconds(1): received after " + at + " ms";
    }

    static Object longPolling() throws Exception {
        String q = make("spring-lp", Map.of());
        long t = System.currentTimeMillis();
        eq(template.receive(from -> from.queue(q).pollTimeout(Duration.ofSeconds(1)), String.class).isPresent(), false, "empty poll");
        long empty = System.currentTimeMillis() - t;
        check(empty >= 900 && empty < 3500, "empty 1 s poll took " + empty + " ms");
        t = System.currentTimeMillis();
        Thread sender = new Thread(() -> { sleep(500); template.send(q, "wake up"); });
        sender.start();
        Optional<Message<String>> m = template.receive(from -> from.queue(q).pollTimeout(Duration.ofSeconds(5)), String.class);
        long woke = System.currentTimeMillis() - t;
        sender.join();
        eq(m.map(Message::getPayload).orElse(null), "wake up", "long poll result");
        check(woke >= 400 && woke < 2500, "woke after " + woke + " ms (send at 500 ms)");
        admin.deleteQueue(b -> b.queueUrl(q));
        return "empty poll " + empty + " ms; woke after " + woke + " ms";
    }

    static Object fifo() throws Exception {
        String q = url("fifo");
        for (String b : List.of("a1", "a2", "a3")) template.send(to -> to.queue(q).payload(b).messageGroupId("g1").messageDeduplicationId(b));
        template.send(to -> to.queue(q).payload("a1").messageGroupId("g1").messageDeduplicationId("a1")); // duplicate
        List<String> got = new ArrayList<>();
        for (int i = 0; i < 3; i++) got.add(poll(listeners.fifo, 5000, "FIFO delivery " + (i + 1)));
        eq(got, List.of("a1", "a2", "a3"), "FIFO order through @SqsListener");
        check(listeners.fifo.poll(1000, TimeUnit.MILLISECONDS) == null, "the duplicate a1 was delivered");
        return "ordered delivery within a group through @SqsListener, explicit deduplication";
    }

    static Object deadLetter() throws Exception {
        SendResult<String> sent = template.send(to -> to.queue(url("fail")).payload("poison"));
        long a = poll(listeners.failedAt, 5000, "1st delivery");
        long b = poll(listeners.failedAt, 5000, "2nd delivery (the message must come back after the exception)");
        check(b - a >= 800, "redelivered after " + (b - a) + " ms, before the 1 s visibility timeout");
        List<software.amazon.awssdk.services.sqs.model.Message> dl = new ArrayList<>();
        within(5000, () -> {
            dl.addAll(admin.receiveMessage(r -> r.queueUrl(url("dlq")).messageSystemAttributeNames(MessageSystemAttributeName.ALL)).messages());
            return !dl.isEmpty();
        });
        eq(dl.size(), 1, "messages in the dead-letter queue");
        eq(dl.get(0).messageId(), sent.messageId().toString(), "dead-lettered message id");
        eq(dl.get(0).body(), "poison", "dead-lettered body");
        String srcArn = admin.getQueueAttributes(r -> r.queueUrl(url("fail")).attributeNamesWithStrings("QueueArn")).attributesAsStrings().get("QueueArn");
        eq(dl.get(0).attributesAsStrings().get("DeadLetterQueueSourceArn"), srcArn, "DeadLetterQueueSourceArn");
        check(listeners.failedAt.poll(1500, TimeUnit.MILLISECONDS) == null, "delivered again after maxReceiveCount 2");
        return "listener exception: message returned after the visibility timeout, then moved to the DLQ after maxReceiveCount 2 "
                + "(message move tasks have no Spring Cloud AWS API)";
    }

    static Object errorsTyped() {
        SqsTemplate failing = SqsTemplate.builder().sqsAsyncClient(asyncClient())
                .configure(o -> o.queueNotFoundStrategy(QueueNotFoundStrategy.FAIL)).build();
        try {
            failing.send(name("missing"), "x");
            throw new Fail("send to a missing queue with QueueNotFoundStrategy.FAIL succeeded");
        } catch (Fail f) {
            throw f;
        } catch (Exception e) {
            Throwable t = e;
            while (t != null && !(t instanceof QueueDoesNotExistException)) t = t.getCause();
            check(t != null, "cause chain lacks QueueDoesNotExistException: " + e);
            return "send to a missing queue: " + e.getClass().getSimpleName() + " caused by QueueDoesNotExistException ("
                    + ((QueueDoesNotExistException) t).awsErrorDetails().errorCode() + ")";
        }
    }

    static SqsAsyncClient asyncClient() {
        return SqsAsyncClient.builder().endpointOverride(URI.create(endpoint)).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("AKIAIOSFODNN7EXAMPLE", "secret"))).build();
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2 && args.length != 3) { System.err.println("usage: SpringSqs <endpoint> <results.json> [<sns-results.json>]"); System.exit(2); }
        endpoint = args[0].replaceAll("/+$", "");
        admin = SqsClient.builder().endpointOverride(URI.create(endpoint)).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("AKIAIOSFODNN7EXAMPLE", "secret"))).build();
        Q.put("ack", make("spring-ack", Map.of()));
        Q.put("vis", make("spring-vis", Map.of("VisibilityTimeout", "30")));
        Q.put("fifo", make("spring-fifo", Map.of("FifoQueue", "true")));
        Q.put("dlq", make("spring-dlq", Map.of()));
        String dlqArn = admin.getQueueAttributes(b -> b.queueUrl(Q.get("dlq")).attributeNamesWithStrings("QueueArn")).attributesAsStrings().get("QueueArn");
        Q.put("fail", make("spring-fail", Map.of("VisibilityTimeout", "1",
                "RedrivePolicy", "{\"deadLetterTargetArn\":\"" + dlqArn + "\",\"maxReceiveCount\":2}")));

        Map<String, Object> props = new HashMap<>();
        props.put("spring.main.web-application-type", "none");
        props.put("spring.main.banner-mode", "off");
        props.put("spring.cloud.aws.sqs.endpoint", endpoint);
        props.put("spring.cloud.aws.sns.endpoint", endpoint);
        props.put("spring.cloud.aws.region.static", "us-east-1");
        props.put("spring.cloud.aws.credentials.access-key", "AKIAIOSFODNN7EXAMPLE");
        props.put("spring.cloud.aws.credentials.secret-key", "secret");
        props.put("spring.cloud.aws.sqs.listener.poll-timeout", "1s");
        props.put("logging.level.root", "WARN");
        props.put("logging.level.io.awspring.cloud", "OFF"); // listener failures on purpose log whole stack traces
        for (String role : List.of("ack", "vis", "fifo", "fail")) props.put("retsu.queue." + role, nameOf(Q.get(role)));
        SpringApplication app = new SpringApplication(SpringSqs.class);
        app.setDefaultProperties(props);
        ConfigurableApplicationContext ctx = app.run();
        template = ctx.getBean(SqsTemplate.class);
        listeners = ctx.getBean(Listeners.class);

        Map<String, Scenario> s = new LinkedHashMap<>();
        s.put("queue_lifecycle", SpringSqs::queueLifecycle);
        s.put("list_queues_pagination", () -> new NotApplicable("Spring Cloud AWS has no ListQueues API"));
        s.put("send_receive_delete_attributes", SpringSqs::sendReceiveDeleteAttributes);
        s.put("batches_partial_failure", SpringSqs::batchesPartialFailure);
        s.put("visibility_change_release", SpringSqs::visibilityChangeRelease);
        s.put("delay", SpringSqs::delay);
        s.put("long_polling", SpringSqs::longPolling);
        s.put("fifo_order_group_lock_dedup", SpringSqs::fifo);
        s.put("dead_letter_and_move_task", SpringSqs::deadLetter);
        s.put("tags", () -> new NotApplicable("Spring Cloud AWS has no queue tagging API"));
        s.put("errors_typed", SpringSqs::errorsTyped);
        String version = jarVersion(SqsTemplate.class, "?");
        int rc = Harness.run("spring-cloud-aws-sqs", version, "json",
                Map.of("spring_boot", jarVersion(SpringApplication.class, "?"), "awssdk", software.amazon.awssdk.core.util.VersionInfo.SDK_VERSION),
                args[1], s, null);
        if (args.length == 3) rc = Math.max(rc, SpringSns.run(ctx, args[2]));
        ctx.close();
        System.exit(rc);
    }
}
