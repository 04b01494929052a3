package dev.retsu.compat;

import static dev.retsu.compat.Harness.*;

import java.time.Duration;
import java.util.*;
import java.util.stream.Collectors;

import io.awspring.cloud.sns.core.SnsNotification;
import io.awspring.cloud.sns.core.SnsTemplate;
import io.awspring.cloud.sqs.operations.SqsTemplate;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.messaging.Message;
import software.amazon.awssdk.services.sns.SnsClient;

/**
 * The SNS scenarios through Spring Cloud AWS (run by SpringSqs with a third
 * argument, in its context): SnsTemplate.sendNotification publishes, with
 * the subject and a String header (which SnsTemplate sends as a message
 * attribute); the autoconfigured SnsClient creates the topics and subscribes
 * the queues by ARN (SnsTemplate has no API for either); SqsTemplate
 * receives (and acknowledges) what arrived.
 */
final class SpringSns {
    static final String REGION = "us-east-1";
    static final String ACCOUNT = "000000000000";
    static SnsTemplate sns;
    static SnsClient snsClient;
    static SqsTemplate sqs;
    static final List<String> queues = new ArrayList<>();
    static final List<String> topics = new ArrayList<>();

    private SpringSns() {}

    record Queue(String url, String arn) {}

    static Queue queue(String stem) {
        String url = SpringSqs.make(stem, Map.of());
        queues.add(url);
        return new Queue(url, "arn:aws:sqs:" + REGION + ":" + ACCOUNT + ":" + SpringSqs.nameOf(url));
    }

    static String topic(String stem) {
        String arn = snsClient.createTopic(b -> b.name(name(stem))).topicArn();
        topics.add(arn);
        return arn;
    }

    static void subscribe(String topicArn, String queueArn, Map<String, String> attributes) {
        String arn = snsClient.subscribe(b -> b.topicArn(topicArn).protocol("sqs").endpoint(queueArn)
                .attributes(attributes).returnSubscriptionArn(true)).subscriptionArn();
        check(arn != null && arn.startsWith(topicArn + ":"), "SubscriptionArn " + arn + " is not under " + topicArn);
    }

    /** SqsTemplate.receiveMany until want messages arrived or ms passed (each acknowledged = deleted). */
    static List<Message<String>> receive(String url, int want, long ms) {
        List<Message<String>> got = new ArrayList<>();
        long deadline = System.currentTimeMillis() + ms;
        while (got.size() < want && System.currentTimeMillis() < deadline) {
            got.addAll(sqs.receiveMany(from -> from.queue(url).maxNumberOfMessages(10).pollTimeout(Duration.ofSeconds(1)), String.class));
        }
        return got;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> envelope(Message<String> m, String what) {
        try {
            Object v = new MiniJson(m.getPayload()).value();
            check(v instanceof Map, what + ": the body is not a JSON object");
            return (Map<String, Object>) v;
        } catch (IllegalArgumentException e) {
            throw new Fail(what + ": the body is not a JSON envelope (" + e.getMessage() + "): " + m.getPayload());
        }
    }

    static Object fanoutEnvelope() {
        String arn = topic("spring-fan");
        List<Queue> qs = List.of(queue("spring-fan-a"), queue("spring-fan-b"));
        for (Queue q : qs) subscribe(arn, q.arn(), Map.of());
        String text = "hello fan-out, second sentence";
        SpringSqs.publishedIds.clear();
        sns.sendNotification(arn, SnsNotification.builder(text).subject("Greeting").header("colour", "blue").build());
        eq(SpringSqs.publishedIds.size(), 1, "Publish calls made by SnsTemplate.sendNotification");
        String id = SpringSqs.publishedIds.get(0);
        for (int i = 0; i < qs.size(); i++) {
            List<Message<String>> got = receive(qs.get(i).url(), 1, 5000);
            eq(got.size(), 1, "messages in queue " + (i + 1));
            Map<String, Object> env = envelope(got.get(0), "queue " + (i + 1));
            eq(env.get("Type"), "Notification", "Type");
            eq(env.get("MessageId"), id, "MessageId (Publish's)");
            eq(env.get("TopicArn"), arn, "TopicArn");
            eq(env.get("Subject"), "Greeting", "Subject");
            eq(env.get("Message"), text, "Message");
            check(env.get("MessageAttributes") instanceof Map, "envelope has no MessageAttributes: " + env.get("MessageAttributes"));
            eq(((Map<?, ?>) env.get("MessageAttributes")).get("colour"), Map.of("Type", "String", "Value", "blue"), "MessageAttributes.colour");
            eq(env.get("SignatureVersion"), "1", "SignatureVersion");
            for (String k : List.of("Timestamp", "Signature", "SigningCertURL", "UnsubscribeURL")) {
                check(env.get(k) instanceof String s && !s.isEmpty(), "envelope has no " + k);
            }
        }
        return "both queues got envelope " + id;
    }

    static Object rawAndFilter() {
        String arn = topic("spring-raw");
        Queue raw = queue("spring-raw");
        Queue blue = queue("spring-blue");
        subscribe(arn, raw.arn(), Map.of("RawMessageDelivery", "true"));
        subscribe(arn, blue.arn(), Map.of("FilterPolicy", "{\"colour\":[\"blue\"]}"));
        for (String colour : List.of("red", "blue")) {
            sns.sendNotification(arn, SnsNotification.builder("a " + colour + " one").header("colour", colour).build());
        }
        List<Message<String>> rawGot = receive(raw.url(), 2, 5000);
        eq(rawGot.stream().map(Message::getPayload).sorted().collect(Collectors.toList()), List.of("a blue one", "a red one"), "raw bodies");
        for (Message<String> m : rawGot) {
            String colour = m.getPayload().split(" ")[1];
            eq(m.getHeaders().get("colour"), colour, "header colour (from the SQS message attribute) of " + m.getPayload());
        }
        List<Message<String>> blueGot = receive(blue.url(), 2, 3000);
        eq(blueGot.stream().map(m -> envelope(m, "filtered").get("Message")).collect(Collectors.toList()), List.of("a blue one"), "messages through the filter");
        return "raw body + attribute as an SqsTemplate header; filter let only blue through";
    }

    static int run(ConfigurableApplicationContext ctx, String out) throws Exception {
        sns = ctx.getBean(SnsTemplate.class);
        snsClient = ctx.getBean(SnsClient.class);
        sqs = ctx.getBean(SqsTemplate.class);
        Map<String, Scenario> s = new LinkedHashMap<>();
        s.put("sns_topic_lifecycle", () -> new NotApplicable("SnsTemplate only publishes: it has no API to create, describe, "
                + "tag or delete topics (it resolves a topic name to an ARN itself)"));
        s.put("sns_fanout_envelope", SpringSns::fanoutEnvelope);
        s.put("sns_raw_and_filter", SpringSns::rawAndFilter);
        s.put("sns_fifo", () -> new NotApplicable("SnsTemplate.sendNotification returns nothing, so the SequenceNumber "
                + "a duplicate FIFO publish answers cannot be checked through it"));
        s.put("sns_errors", () -> new NotApplicable("SnsTemplate wraps SDK errors in Spring's MessagingException and resolves "
                + "topic names itself; the typed SNS errors are the SDK's (see the aws-sdk-java-v2 sns column)"));
        String version = jarVersion(SnsTemplate.class, "?");
        return Harness.run("spring-cloud-aws-sns", version, "query", "sns", SNS_SCENARIOS,
                Map.of("spring_boot", jarVersion(org.springframework.boot.SpringApplication.class, "?"),
                        "awssdk", software.amazon.awssdk.core.util.VersionInfo.SDK_VERSION, "reader", "SqsTemplate"),
                out, s, () -> {
                    for (String u : queues) { try { SpringSqs.admin.deleteQueue(b -> b.queueUrl(u)); } catch (Exception ignored) { } }
                    for (String t : topics) { try { snsClient.deleteTopic(b -> b.topicArn(t)); } catch (Exception ignored) { } }
                    queues.clear();
                    topics.clear();
                });
    }
}
