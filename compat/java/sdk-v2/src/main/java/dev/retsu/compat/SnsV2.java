package dev.retsu.compat;

import static dev.retsu.compat.Harness.*;

import java.net.URI;
import java.util.*;
import java.util.stream.Collectors;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.util.VersionInfo;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sns.SnsClient;
import software.amazon.awssdk.services.sns.model.InvalidParameterException;
import software.amazon.awssdk.services.sns.model.MessageAttributeValue;
import software.amazon.awssdk.services.sns.model.NotFoundException;
import software.amazon.awssdk.services.sns.model.PublishResponse;
import software.amazon.awssdk.services.sns.model.Tag;
import software.amazon.awssdk.services.sns.model.Topic;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;

/**
 * The AWS SDK for Java 2.x SNS client (software.amazon.awssdk:sns, through
 * the BOM; AWS Query protocol) against a fresh retsu: topics, SQS
 * subscriptions, publishes, and what arrives in the queues, read back with
 * the same SDK's SqsClient. Run by SdkV2 when given a third argument, through
 * the same wiretap, which judges the SNS requests (SigV4 scope sns) apart.
 */
final class SnsV2 {
    static final String REGION = "us-east-1";
    static final String ACCOUNT = "000000000000";
    static SnsClient sns;
    static SqsClient sqs;
    static final List<String> queues = new ArrayList<>();
    static final List<String> topics = new ArrayList<>();

    private SnsV2() {}

    record Queue(String url, String arn) {}

    static Queue queue(String stem, boolean fifo) {
        String n = name(stem) + (fifo ? ".fifo" : "");
        Map<String, String> attrs = fifo ? Map.of("FifoQueue", "true") : Map.of();
        String url = sqs.createQueue(b -> b.queueName(n).attributesWithStrings(attrs)).queueUrl();
        queues.add(url);
        return new Queue(url, "arn:aws:sqs:" + REGION + ":" + ACCOUNT + ":" + n);
    }

    static String topic(String stem, boolean fifo, Map<String, String> attributes) {
        Map<String, String> attrs = new HashMap<>(attributes);
        if (fifo) attrs.put("FifoTopic", "true");
        String n = name(stem) + (fifo ? ".fifo" : "");
        String arn = sns.createTopic(b -> b.name(n).attributes(attrs)).topicArn();
        topics.add(arn);
        return arn;
    }

    static String subscribe(String topicArn, String queueArn, Map<String, String> attributes) {
        String arn = sns.subscribe(b -> b.topicArn(topicArn).protocol("sqs").endpoint(queueArn)
                .attributes(attributes).returnSubscriptionArn(true)).subscriptionArn();
        check(arn != null && arn.startsWith(topicArn + ":"), "SubscriptionArn " + arn + " is not under " + topicArn);
        return arn;
    }

    /** Receives (and deletes) until want messages arrived or ms passed. */
    static List<Message> drain(String url, int want, long ms, boolean attributes) {
        List<Message> got = new ArrayList<>();
        long deadline = System.currentTimeMillis() + ms;
        while (got.size() < want && System.currentTimeMillis() < deadline) {
            List<Message> ms1 = sqs.receiveMessage(b -> {
                b.queueUrl(url).maxNumberOfMessages(10).waitTimeSeconds(1);
                if (attributes) b.messageAttributeNames("All");
            }).messages();
            for (Message m : ms1) {
                got.add(m);
                sqs.deleteMessage(b -> b.queueUrl(url).receiptHandle(m.receiptHandle()));
            }
        }
        return got;
    }

    /** The SQS body as a JSON envelope (a flat object of strings plus MessageAttributes). */
    @SuppressWarnings("unchecked")
    static Map<String, Object> envelope(Message m, String what) {
        try {
            Object v = new MiniJson(m.body()).value();
            check(v instanceof Map, what + ": the body is not a JSON object");
            return (Map<String, Object>) v;
        } catch (IllegalArgumentException e) {
            throw new Fail(what + ": the body is not a JSON envelope (" + e.getMessage() + "): " + m.body());
        }
    }

    /** fn must throw exactly the modelled type with error code `code`; returns the message. */
    static String expect(Class<? extends AwsServiceException> type, String code, int status, Runnable fn, String what) {
        try {
            fn.run();
        } catch (AwsServiceException e) {
            check(type.isInstance(e), what + ": expected " + type.getSimpleName() + ", got " + e.getClass().getSimpleName()
                    + " (" + e.awsErrorDetails().errorCode() + ": " + e.getMessage() + ")");
            eq(e.awsErrorDetails().errorCode(), code, what + ": error code");
            eq(e.statusCode(), status, what + ": HTTP status");
            return e.awsErrorDetails().errorMessage();
        }
        throw new Fail(what + ": expected " + type.getSimpleName() + ", the call succeeded");
    }

    static MessageAttributeValue str(String v) { return MessageAttributeValue.builder().dataType("String").stringValue(v).build(); }

    // ------------------------------------------------------------------ scenarios

    static Object topicLifecycle() {
        String n = name("life");
        String arn = sns.createTopic(b -> b.name(n)).topicArn();
        topics.add(arn);
        eq(arn, "arn:aws:sns:" + REGION + ":" + ACCOUNT + ":" + n, "TopicArn");
        eq(sns.createTopic(b -> b.name(n)).topicArn(), arn, "CreateTopic again");
        sns.setTopicAttributes(b -> b.topicArn(arn).attributeName("DisplayName").attributeValue("Life cycle"));
        eq(sns.getTopicAttributes(b -> b.topicArn(arn)).attributes().get("DisplayName"), "Life cycle", "DisplayName");
        List<String> listed = sns.listTopicsPaginator(b -> { }).topics().stream().map(Topic::topicArn).collect(Collectors.toList());
        check(listed.contains(arn), "ListTopics does not list " + arn);
        sns.tagResource(b -> b.resourceArn(arn).tags(Tag.builder().key("team").value("a").build(), Tag.builder().key("env").value("test").build()));
        Map<String, String> tags = new TreeMap<>();
        sns.listTagsForResource(b -> b.resourceArn(arn)).tags().forEach(t -> tags.put(t.key(), t.value()));
        eq(tags, new TreeMap<>(Map.of("env", "test", "team", "a")), "ListTagsForResource");
        sns.untagResource(b -> b.resourceArn(arn).tagKeys("env"));
        eq(sns.listTagsForResource(b -> b.resourceArn(arn)).tags().stream().map(t -> t.key() + "=" + t.value()).collect(Collectors.toList()),
                List.of("team=a"), "tags after UntagResource");
        sns.deleteTopic(b -> b.topicArn(arn));
        String msg = expect(NotFoundException.class, "NotFound", 404, () -> sns.getTopicAttributes(b -> b.topicArn(arn)), "GetTopicAttributes after DeleteTopic");
        check(msg != null && msg.contains("Topic does not exist"), "NotFound message " + msg);
        return "NotFoundException: " + msg;
    }

    static Object fanoutEnvelope() {
        String arn = topic("fan", false, Map.of());
        List<Queue> qs = List.of(queue("fan-a", false), queue("fan-b", false));
        for (Queue q : qs) subscribe(arn, q.arn(), Map.of());
        String text = "hello \"fan-out\"\nsecond line";
        String id = sns.publish(b -> b.topicArn(arn).message(text).subject("Greeting").messageAttributes(Map.of("colour", str("blue")))).messageId();
        for (int i = 0; i < qs.size(); i++) {
            List<Message> got = drain(qs.get(i).url(), 1, 5000, false);
            eq(got.size(), 1, "messages in queue " + (i + 1));
            Map<String, Object> env = envelope(got.get(0), "queue " + (i + 1));
            eq(env.get("Type"), "Notification", "Type");
            eq(env.get("MessageId"), id, "MessageId (Publish's)");
            eq(env.get("TopicArn"), arn, "TopicArn");
            eq(env.get("Subject"), "Greeting", "Subject");
            eq(env.get("Message"), text, "Message");
            eq(env.get("MessageAttributes"), Map.of("colour", Map.of("Type", "String", "Value", "blue")), "MessageAttributes");
            eq(env.get("SignatureVersion"), "1", "SignatureVersion");
            for (String k : List.of("Timestamp", "Signature", "SigningCertURL", "UnsubscribeURL")) {
                check(env.get(k) instanceof String s && !s.isEmpty(), "envelope has no " + k);
            }
        }
        return "both queues got envelope " + id;
    }

    static Object rawAndFilter() {
        String arn = topic("raw", false, Map.of());
        Queue raw = queue("raw", false);
        Queue blue = queue("blue", false);
        subscribe(arn, raw.arn(), Map.of("RawMessageDelivery", "true"));
        subscribe(arn, blue.arn(), Map.of("FilterPolicy", "{\"colour\":[\"blue\"]}"));
        for (String colour : List.of("red", "blue")) {
            sns.publish(b -> b.topicArn(arn).message("a " + colour + " one").messageAttributes(Map.of("colour", str(colour))));
        }
        List<Message> rawGot = drain(raw.url(), 2, 5000, true);
        eq(rawGot.stream().map(Message::body).sorted().collect(Collectors.toList()), List.of("a blue one", "a red one"), "raw bodies");
        for (Message m : rawGot) {
            String colour = m.body().split(" ")[1];
            var a = m.messageAttributes().get("colour");
            check(a != null, "raw message " + m.body() + " has no SQS attribute colour: " + m.messageAttributes());
            eq(List.of(a.dataType(), a.stringValue()), List.of("String", colour), "SQS attribute colour of " + m.body());
            eq(m.messageAttributes().keySet(), Set.of("colour"), "SQS attribute names of " + m.body());
        }
        List<Message> blueGot = drain(blue.url(), 2, 3000, false);
        eq(blueGot.stream().map(m -> envelope(m, "filtered").get("Message")).collect(Collectors.toList()), List.of("a blue one"), "messages through the filter");
        return "raw body + SQS attribute; filter let only blue through";
    }

    static Object fifo() {
        String arn = topic("fifo", true, Map.of("ContentBasedDeduplication", "true"));
        Queue q = queue("fifo", true);
        subscribe(arn, q.arn(), Map.of("RawMessageDelivery", "true"));
        List<String> seqs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            String body = "m" + i;
            PublishResponse r = sns.publish(b -> b.topicArn(arn).message(body).messageGroupId("g"));
            check(r.sequenceNumber() != null && !r.sequenceNumber().isEmpty(), "Publish " + body + " returned no SequenceNumber");
            seqs.add(r.sequenceNumber());
        }
        check(new java.math.BigInteger(seqs.get(0)).compareTo(new java.math.BigInteger(seqs.get(1))) < 0
                && new java.math.BigInteger(seqs.get(1)).compareTo(new java.math.BigInteger(seqs.get(2))) < 0, "SequenceNumbers not increasing: " + seqs);
        PublishResponse again = sns.publish(b -> b.topicArn(arn).message("m0").messageGroupId("g"));
        eq(again.sequenceNumber(), seqs.get(0), "SequenceNumber of the duplicate publish");
        List<Message> got = drain(q.url(), 4, 4000, false);
        eq(got.stream().map(Message::body).collect(Collectors.toList()), List.of("m0", "m1", "m2"), "FIFO queue contents, in order");
        return "3 delivered in order; duplicate answered sequence " + seqs.get(0);
    }

    static Object errors() {
        String missing = "arn:aws:sns:" + REGION + ":" + ACCOUNT + ":" + name("missing");
        String m1 = expect(NotFoundException.class, "NotFound", 404, () -> sns.publish(b -> b.topicArn(missing).message("x")), "Publish to a missing topic");
        check(m1 != null && m1.contains("Topic does not exist"), "NotFound message " + m1);
        String m2 = expect(InvalidParameterException.class, "InvalidParameter", 400, () -> sns.createTopic(b -> b.name("bad name")), "CreateTopic 'bad name'");
        check(m2 != null && m2.startsWith("Invalid parameter:"), "InvalidParameter message " + m2);
        return "NotFoundException: " + m1 + "; InvalidParameterException: " + m2;
    }

    static int run(String endpoint, String out) throws Exception {
        StaticCredentialsProvider creds = StaticCredentialsProvider.create(AwsBasicCredentials.create("AKIAIOSFODNN7EXAMPLE", "secret"));
        sns = SnsClient.builder().endpointOverride(URI.create(endpoint)).region(Region.US_EAST_1).credentialsProvider(creds)
                .httpClient(ApacheHttpClient.create()).overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry())).build();
        sqs = SqsClient.builder().endpointOverride(URI.create(endpoint)).region(Region.US_EAST_1).credentialsProvider(creds)
                .httpClient(ApacheHttpClient.create()).overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry())).build();
        Map<String, Scenario> s = new LinkedHashMap<>();
        s.put("sns_topic_lifecycle", SnsV2::topicLifecycle);
        s.put("sns_fanout_envelope", SnsV2::fanoutEnvelope);
        s.put("sns_raw_and_filter", SnsV2::rawAndFilter);
        s.put("sns_fifo", SnsV2::fifo);
        s.put("sns_errors", SnsV2::errors);
        int rc = Harness.run("aws-sdk-java-v2 sns", VersionInfo.SDK_VERSION, "query", "sns", SNS_SCENARIOS,
                Map.of("java", System.getProperty("java.version"), "sqs_reader", "aws-sdk-java-v2 sqs (json)"), out, s, () -> {
                    for (String u : queues) { try { sqs.deleteQueue(b -> b.queueUrl(u)); } catch (Exception ignored) { } }
                    for (String t : topics) { try { sns.deleteTopic(b -> b.topicArn(t)); } catch (Exception ignored) { } }
                    queues.clear();
                    topics.clear();
                });
        sns.close();
        sqs.close();
        return rc;
    }
}
