package dev.retsu.compat;

import static dev.retsu.compat.Harness.*;

import java.net.URI;
import java.util.*;
import java.util.stream.Collectors;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.core.util.VersionInfo;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.*;

/**
 * The AWS SDK for Java 2.x (software.amazon.awssdk:sqs, through the BOM),
 * AWS JSON 1.0, against a fresh retsu. Its MessageMD5ChecksumInterceptor is
 * on (the default): it fails a send or receive whose MD5OfMessageBody or
 * MD5OfMessageAttributes is missing or wrong, so every passing call here
 * also passed the strictest MD5 checker we have.
 *
 *   java -cp ... dev.retsu.compat.SdkV2 <endpoint> <results.json> [<sns-results.json>]
 *
 * With the third argument the SNS scenarios (SnsV2) run afterwards, on the
 * same server, into that file.
 */
public final class SdkV2 {
    static SqsClient c;
    static String endpoint;
    static final List<String> created = new ArrayList<>();

    static String create(String stem, Map<String, String> attrs, Map<String, String> tags) {
        String name = name(stem) + ("true".equals(attrs.get("FifoQueue")) ? ".fifo" : "");
        String url = c.createQueue(b -> b.queueName(name).attributesWithStrings(attrs).tags(tags)).queueUrl();
        created.add(url);
        return url;
    }

    static Map<String, String> attrs(String url, String... names) {
        return c.getQueueAttributes(b -> b.queueUrl(url).attributeNamesWithStrings(names)).attributesAsStrings();
    }

    static List<Message> receive(String url) { return receive(ReceiveMessageRequest.builder().queueUrl(url)); }

    static List<Message> receive(ReceiveMessageRequest.Builder b) {
        ReceiveMessageRequest r = b.build();
        if (r.maxNumberOfMessages() == null) r = r.toBuilder().maxNumberOfMessages(10).build();
        return c.receiveMessage(r).messages();
    }

    static List<Message> receiveN(String url, int n, long ms) {
        List<Message> got = new ArrayList<>();
        within(ms, () -> { got.addAll(receive(url)); return got.size() >= n; });
        return got;
    }

    static List<String> bodies(List<Message> ms) { return ms.stream().map(Message::body).collect(Collectors.toList()); }

    static List<String> sorted(Collection<String> s) { List<String> l = new ArrayList<>(s); Collections.sort(l); return l; }

    /** Runs fn, which must throw exactly the modelled exception type; returns the error code seen. */
    static String expect(Class<? extends AwsServiceException> type, Runnable fn, String what) {
        try {
            fn.run();
        } catch (AwsServiceException e) {
            check(type.isInstance(e), what + ": expected " + type.getSimpleName() + ", got " + e.getClass().getSimpleName()
                    + " (" + e.awsErrorDetails().errorCode() + ": " + e.getMessage() + ")");
            return e.awsErrorDetails().errorCode();
        }
        throw new Fail(what + ": expected " + type.getSimpleName() + ", the call succeeded");
    }

    static MessageAttributeValue str(String type, String v) { return MessageAttributeValue.builder().dataType(type).stringValue(v).build(); }

    // ------------------------------------------------------------------ scenarios

    static Object queueLifecycle() {
        String url = create("life", Map.of("VisibilityTimeout", "5"), Map.of());
        String name = url.substring(url.lastIndexOf('/') + 1);
        check(url.startsWith(endpoint + "/"), "QueueUrl " + url + " does not lead back to " + endpoint);
        eq(c.getQueueUrl(b -> b.queueName(name)).queueUrl(), url, "GetQueueUrl");
        Map<String, String> all = attrs(url, "All");
        eq(all.get("VisibilityTimeout"), "5", "VisibilityTimeout");
        eq(all.get("MaximumMessageSize"), "1048576", "MaximumMessageSize");
        eq(all.get("MessageRetentionPeriod"), "345600", "MessageRetentionPeriod");
        check(all.getOrDefault("QueueArn", "").startsWith("arn:aws:sqs:") && all.get("QueueArn").endsWith(":" + name), "QueueArn " + all.get("QueueArn"));
        check(!all.containsKey("FifoQueue"), "standard queue lists FifoQueue");
        eq(attrs(url, "DelaySeconds"), Map.of("DelaySeconds", "0"), "GetQueueAttributes([DelaySeconds])");
        eq(c.createQueue(b -> b.queueName(name).attributesWithStrings(Map.of("VisibilityTimeout", "5"))).queueUrl(), url, "CreateQueue again, same attributes");
        eq(c.createQueue(b -> b.queueName(name)).queueUrl(), url, "CreateQueue again, no attributes");
        expect(QueueNameExistsException.class, () -> c.createQueue(b -> b.queueName(name).attributesWithStrings(Map.of("VisibilityTimeout", "6"))), "CreateQueue with a different attribute");
        c.setQueueAttributes(b -> b.queueUrl(url).attributesWithStrings(Map.of("VisibilityTimeout", "7")));
        eq(attrs(url, "VisibilityTimeout").get("VisibilityTimeout"), "7", "VisibilityTimeout after set");
        c.sendMessage(b -> b.queueUrl(url).messageBody("to be purged"));
        eq(attrs(url, "ApproximateNumberOfMessages").get("ApproximateNumberOfMessages"), "1", "count before purge");
        c.purgeQueue(b -> b.queueUrl(url));
        eq(attrs(url, "ApproximateNumberOfMessages").get("ApproximateNumberOfMessages"), "0", "count after purge");
        c.deleteQueue(b -> b.queueUrl(url));
        String code = expect(QueueDoesNotExistException.class, () -> c.getQueueUrl(b -> b.queueName(name)), "GetQueueUrl after DeleteQueue");
        String furl = create("life", Map.of("FifoQueue", "true", "ContentBasedDeduplication", "true"), Map.of());
        Map<String, String> fa = attrs(furl, "All");
        eq(List.of(fa.get("FifoQueue"), fa.get("ContentBasedDeduplication")), List.of("true", "true"), "FIFO attributes");
        return "create/get-url/attributes/idempotent create/QueueNameExists/purge/delete ok; missing queue code " + code;
    }

    static Object listQueuesPagination() {
        String prefix = name("lqp") + "-";
        List<String> made = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            String n = prefix + i;
            String u = c.createQueue(b -> b.queueName(n)).queueUrl();
            created.add(u);
            made.add(u);
        }
        create("other", Map.of(), Map.of());
        Collections.sort(made);
        ListQueuesResponse whole = c.listQueues(b -> b.queueNamePrefix(prefix));
        eq(sorted(whole.queueUrls()), made, "ListQueues(prefix)");
        check(whole.nextToken() == null, "NextToken without MaxResults");
        List<String> seen = new ArrayList<>();
        int pages = 0;
        String token = null;
        do {
            String t = token;
            ListQueuesResponse page = c.listQueues(b -> b.queueNamePrefix(prefix).maxResults(2).nextToken(t));
            pages++;
            check(page.queueUrls().size() <= 2, "page of " + page.queueUrls().size() + " with MaxResults 2");
            seen.addAll(page.queueUrls());
            token = page.nextToken();
        } while (token != null && pages < 6);
        eq(sorted(seen), made, "union of pages");
        eq(pages, 3, "pages for 5 queues at MaxResults 2");
        List<String> viaPaginator = new ArrayList<>();
        c.listQueuesPaginator(b -> b.queueNamePrefix(prefix).maxResults(2)).queueUrls().forEach(viaPaginator::add);
        eq(sorted(viaPaginator), made, "listQueuesPaginator");
        eq(c.listQueues(b -> b.queueNamePrefix(prefix + "zzz")).queueUrls().size(), 0, "ListQueues with no match");
        return "prefix filter, 3 pages of MaxResults 2, listQueuesPaginator, empty match ok";
    }

    static Object sendReceiveDeleteAttributes() {
        String url = create("srd", Map.of(), Map.of());
        String body = "h\u00e9llo <w\u00f6rld> & \"quotes\" \u2713 \ud83d\ude00 \r\n\ttab ]]>";
        byte[] bin = {0, 1, 2, (byte) 254, (byte) 255};
        Map<String, MessageAttributeValue> mattrs = Map.of(
                "s", str("String", "hello \u2713"), "n", str("Number", "12.5"),
                "b", MessageAttributeValue.builder().dataType("Binary").binaryValue(SdkBytes.fromByteArray(bin)).build(),
                "custom", str("String.json", "{\"k\":1}"));
        Map<String, Attr> want = Map.of("s", Attr.str("String", "hello \u2713"), "n", Attr.str("Number", "12.5"),
                "b", Attr.bin("Binary", bin), "custom", Attr.str("String.json", "{\"k\":1}"));
        SendMessageResponse sent = c.sendMessage(b -> b.queueUrl(url).messageBody(body).messageAttributes(mattrs)
                .messageSystemAttributesWithStrings(Map.of("AWSTraceHeader",
                        MessageSystemAttributeValue.builder().dataType("String").stringValue(TRACE).build())));
        eq(sent.md5OfMessageBody(), md5Hex(body), "MD5OfMessageBody");
        eq(sent.md5OfMessageAttributes(), md5OfAttributes(want), "MD5OfMessageAttributes");
        eq(sent.md5OfMessageSystemAttributes(), TRACE_MD5, "MD5OfMessageSystemAttributes");
        check(sent.sequenceNumber() == null, "standard queue returned a SequenceNumber");
        SendMessageResponse plain = c.sendMessage(b -> b.queueUrl(url).messageBody("plain"));
        check(plain.md5OfMessageAttributes() == null, "MD5OfMessageAttributes without attributes");

        List<Message> msgs = receive(ReceiveMessageRequest.builder().queueUrl(url).messageAttributeNames("All")
                .messageSystemAttributeNamesWithStrings("All").visibilityTimeout(30));
        eq(msgs.size(), 2, "messages received");
        Message m = msgs.stream().filter(x -> x.messageId().equals(sent.messageId())).findFirst().orElseThrow(() -> new Fail("sent message not received"));
        Message p = msgs.stream().filter(x -> x.messageId().equals(plain.messageId())).findFirst().orElseThrow(() -> new Fail("plain message not received"));
        check(p.messageAttributes().isEmpty(), "plain message came back with attributes");
        eq(m.body(), body, "Body round trip");
        eq(m.md5OfBody(), md5Hex(body), "MD5OfBody");
        eq(new TreeSet<>(m.messageAttributes().keySet()), new TreeSet<>(mattrs.keySet()), "received attribute names");
        for (var e : mattrs.entrySet()) eq(m.messageAttributes().get(e.getKey()), e.getValue(), "attribute " + e.getKey());
        eq(m.md5OfMessageAttributes(), md5OfAttributes(want), "received MD5OfMessageAttributes");
        Map<String, String> sa = m.attributesAsStrings();
        eq(sa.get("AWSTraceHeader"), TRACE, "AWSTraceHeader");
        eq(sa.get("ApproximateReceiveCount"), "1", "ApproximateReceiveCount");
        check(sa.getOrDefault("SentTimestamp", "").matches("\\d{13}")
                && Math.abs(Long.parseLong(sa.get("SentTimestamp")) - System.currentTimeMillis()) < 60000, "SentTimestamp " + sa.get("SentTimestamp"));
        check(sa.containsKey("SenderId") && sa.containsKey("ApproximateFirstReceiveTimestamp"), "system attributes " + sa.keySet());

        c.changeMessageVisibility(b -> b.queueUrl(url).receiptHandle(m.receiptHandle()).visibilityTimeout(0));
        List<Message> again = receive(ReceiveMessageRequest.builder().queueUrl(url).messageAttributeNames("s", "cu.*")
                .messageSystemAttributeNamesWithStrings("ApproximateReceiveCount"));
        eq(again.size(), 1, "receive after release");
        Message a = again.get(0);
        check(!a.receiptHandle().equals(m.receiptHandle()), "a receive must issue a new receipt handle");
        eq(new TreeSet<>(a.messageAttributes().keySet()), new TreeSet<>(List.of("custom", "s")), "filtered attributes (s, cu.*)");
        eq(a.md5OfMessageAttributes(), md5OfAttributes(Map.of("s", want.get("s"), "custom", want.get("custom"))), "MD5 of the filtered attributes");
        eq(a.attributesAsStrings(), Map.of("ApproximateReceiveCount", "2"), "selected system attributes");
        for (String h : List.of(a.receiptHandle(), p.receiptHandle(), a.receiptHandle())) c.deleteMessage(b -> b.queueUrl(url).receiptHandle(h));
        Map<String, String> counts = attrs(url, "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible");
        eq(List.of(counts.get("ApproximateNumberOfMessages"), counts.get("ApproximateNumberOfMessagesNotVisible")), List.of("0", "0"), "counts after delete");
        return "String/Number/Binary/custom attributes, AWSTraceHeader, MD5s (body, attributes, filtered, system), SDK MD5 interceptor on";
    }

    static Object batchesPartialFailure() {
        String url = create("batch", Map.of("MaximumMessageSize", "1024"), Map.of());
        SendMessageBatchResponse out = c.sendMessageBatch(b -> b.queueUrl(url).entries(
                SendMessageBatchRequestEntry.builder().id("ok1").messageBody("one").build(),
                SendMessageBatchRequestEntry.builder().id("ok2").messageBody("two").messageAttributes(Map.of("k", str("String", "x"))).build(),
                SendMessageBatchRequestEntry.builder().id("big").messageBody("x".repeat(2000)).build(),
                SendMessageBatchRequestEntry.builder().id("bad").messageBody("bad \u0000 char").build()));
        Map<String, SendMessageBatchResultEntry> ok = out.successful().stream().collect(Collectors.toMap(SendMessageBatchResultEntry::id, e -> e));
        Map<String, BatchResultErrorEntry> failed = out.failed().stream().collect(Collectors.toMap(BatchResultErrorEntry::id, e -> e));
        eq(new TreeSet<>(ok.keySet()), new TreeSet<>(List.of("ok1", "ok2")), "Successful ids");
        eq(new TreeSet<>(failed.keySet()), new TreeSet<>(List.of("bad", "big")), "Failed ids");
        eq(ok.get("ok1").md5OfMessageBody(), md5Hex("one"), "ok1 MD5OfMessageBody");
        eq(ok.get("ok2").md5OfMessageAttributes(), "a45daa70926828a2f0a1db3418e6feb4", "ok2 MD5OfMessageAttributes");
        eq(List.of(failed.get("big").code(), failed.get("big").senderFault()), List.of("InvalidParameterValue", true), "oversize entry");
        eq(List.of(failed.get("bad").code(), failed.get("bad").senderFault()), List.of("InvalidMessageContents", true), "invalid character entry");
        List<Message> got = receiveN(url, 2, 3000);
        eq(sorted(bodies(got)), List.of("one", "two"), "received bodies");
        Map<String, String> handle = got.stream().collect(Collectors.toMap(Message::body, Message::receiptHandle));
        ChangeMessageVisibilityBatchResponse cv = c.changeMessageVisibilityBatch(b -> b.queueUrl(url).entries(
                ChangeMessageVisibilityBatchRequestEntry.builder().id("v1").receiptHandle(handle.get("one")).visibilityTimeout(0).build(),
                ChangeMessageVisibilityBatchRequestEntry.builder().id("v2").receiptHandle("garbage").visibilityTimeout(0).build()));
        eq(cv.successful().size(), 1, "ChangeMessageVisibilityBatch Successful");
        eq(cv.failed().stream().map(e -> e.id() + "=" + e.code()).collect(Collectors.toList()), List.of("v2=ReceiptHandleIsInvalid"), "ChangeMessageVisibilityBatch Failed");
        List<Message> again = receive(url);
        eq(bodies(again), List.of("one"), "released by the batch");
        DeleteMessageBatchResponse del = c.deleteMessageBatch(b -> b.queueUrl(url).entries(
                DeleteMessageBatchRequestEntry.builder().id("d1").receiptHandle(again.get(0).receiptHandle()).build(),
                DeleteMessageBatchRequestEntry.builder().id("d2").receiptHandle(handle.get("two")).build(),
                DeleteMessageBatchRequestEntry.builder().id("d3").receiptHandle("garbage").build()));
        eq(del.successful().size(), 2, "DeleteMessageBatch Successful");
        eq(del.failed().stream().map(e -> e.id() + "=" + e.code()).collect(Collectors.toList()), List.of("d3=ReceiptHandleIsInvalid"), "DeleteMessageBatch Failed");
        expect(BatchEntryIdsNotDistinctException.class, () -> c.sendMessageBatch(b -> b.queueUrl(url).entries(
                SendMessageBatchRequestEntry.builder().id("same").messageBody("a").build(),
                SendMessageBatchRequestEntry.builder().id("same").messageBody("b").build())), "SendMessageBatch with repeated ids");
        return "send/delete/change-visibility batches with partial failures, MD5s, BatchEntryIdsNotDistinct ok";
    }

    static Object visibilityChangeRelease() {
        String url = create("vis", Map.of("VisibilityTimeout", "30"), Map.of());
        c.sendMessage(b -> b.queueUrl(url).messageBody("v"));
        List<Message> r1 = receive(url);
        eq(r1.size(), 1, "first receive");
        eq(receive(url).size(), 0, "receive while in flight");
        c.changeMessageVisibility(b -> b.queueUrl(url).receiptHandle(r1.get(0).receiptHandle()).visibilityTimeout(0));
        eq(receive(ReceiveMessageRequest.builder().queueUrl(url).visibilityTimeout(1)).size(), 1, "receive after release");
        eq(receive(url).size(), 0, "hidden by the 1 s receive override");
        sleep(1300);
        List<Message> r3 = receive(url);
        eq(r3.size(), 1, "visible again after the 1 s override");
        c.changeMessageVisibility(b -> b.queueUrl(url).receiptHandle(r3.get(0).receiptHandle()).visibilityTimeout(1));
        sleep(1300);
        List<Message> r4 = receive(url);
        eq(r4.size(), 1, "visible after the 1 s change");
        c.changeMessageVisibility(b -> b.queueUrl(url).receiptHandle(r4.get(0).receiptHandle()).visibilityTimeout(30));
        eq(receive(url).size(), 0, "after extending");
        c.deleteMessage(b -> b.queueUrl(url).receiptHandle(r4.get(0).receiptHandle()));
        return "hidden in flight; released by 0; 1 s override and 1 s change expire; extend ok";
    }

    static Object delay() {
        String q1 = create("delay", Map.of(), Map.of());
        String q2 = create("qdelay", Map.of("DelaySeconds", "1"), Map.of());
        c.sendMessage(b -> b.queueUrl(q1).messageBody("per-message").delaySeconds(1));
        c.sendMessageBatch(b -> b.queueUrl(q1).entries(
                SendMessageBatchRequestEntry.builder().id("now").messageBody("batch-now").delaySeconds(0).build(),
                SendMessageBatchRequestEntry.builder().id("later").messageBody("batch-later").delaySeconds(1).build()));
        c.sendMessage(b -> b.queueUrl(q2).messageBody("queue-delay"));
        long t0 = System.currentTimeMillis();
        eq(bodies(receive(q1)), List.of("batch-now"), "immediately visible on q1");
        eq(receive(q2).size(), 0, "immediately visible on the delay queue");
        eq(attrs(q1, "ApproximateNumberOfMessagesDelayed").get("ApproximateNumberOfMessagesDelayed"), "2", "ApproximateNumberOfMessagesDelayed");
        sleep(1300 - (System.currentTimeMillis() - t0));
        eq(sorted(bodies(receiveN(q1, 2, 2000))), List.of("batch-later", "per-message"), "q1 after 1.3 s");
        eq(bodies(receiveN(q2, 1, 2000)), List.of("queue-delay"), "delay queue after 1.3 s");
        return "per-message, per-entry and queue DelaySeconds hold messages back, then release them";
    }

    static Object longPolling() throws Exception {
        String url = create("lp", Map.of(), Map.of());
        long t = System.currentTimeMillis();
        eq(receive(ReceiveMessageRequest.builder().queueUrl(url).waitTimeSeconds(1)).size(), 0, "empty long poll");
        long empty = System.currentTimeMillis() - t;
        check(empty >= 900 && empty < 3500, "empty 1 s long poll took " + empty + " ms");
        t = System.currentTimeMillis();
        Thread sender = new Thread(() -> { sleep(500); c.sendMessage(b -> b.queueUrl(url).messageBody("wake up")); });
        sender.start();
        List<Message> got = receive(ReceiveMessageRequest.builder().queueUrl(url).waitTimeSeconds(5));
        long woke = System.currentTimeMillis() - t;
        sender.join();
        eq(bodies(got), List.of("wake up"), "long poll result");
        check(woke >= 400 && woke < 2500, "woke after " + woke + " ms (send at 500 ms)");
        c.deleteMessage(b -> b.queueUrl(url).receiptHandle(got.get(0).receiptHandle()));
        c.setQueueAttributes(b -> b.queueUrl(url).attributesWithStrings(Map.of("ReceiveMessageWaitTimeSeconds", "1")));
        t = System.currentTimeMillis();
        eq(receive(url).size(), 0, "queue-default long poll");
        long qd = System.currentTimeMillis() - t;
        check(qd >= 900 && qd < 3500, "queue-default poll took " + qd + " ms");
        return "empty poll " + empty + " ms; woke after " + woke + " ms; queue-default wait " + qd + " ms";
    }

    static Object fifo() {
        String url = create("fifo", Map.of("FifoQueue", "true"), Map.of());
        List<Long> seq = new ArrayList<>();
        for (String b : List.of("a1", "a2", "a3")) {
            SendMessageResponse r = c.sendMessage(x -> x.queueUrl(url).messageBody(b).messageGroupId("g1").messageDeduplicationId(b));
            check(r.sequenceNumber() != null && r.sequenceNumber().matches("\\d+"), "SequenceNumber " + r.sequenceNumber());
            seq.add(Long.parseUnsignedLong(r.sequenceNumber().length() > 18 ? r.sequenceNumber().substring(r.sequenceNumber().length() - 18) : r.sequenceNumber()));
        }
        check(seq.get(0) < seq.get(1) && seq.get(1) < seq.get(2), "SequenceNumbers not increasing: " + seq);
        c.sendMessage(x -> x.queueUrl(url).messageBody("a1").messageGroupId("g1").messageDeduplicationId("a1"));
        List<Message> r1 = receive(ReceiveMessageRequest.builder().queueUrl(url).maxNumberOfMessages(1).messageSystemAttributeNamesWithStrings("All"));
        eq(bodies(r1), List.of("a1"), "first FIFO receive");
        Map<String, String> at = r1.get(0).attributesAsStrings();
        eq(List.of(at.get("MessageGroupId"), at.get("MessageDeduplicationId")), List.of("g1", "a1"), "FIFO system attributes");
        eq(receive(url).size(), 0, "receive while g1 is locked");
        c.sendMessage(x -> x.queueUrl(url).messageBody("b1").messageGroupId("g2").messageDeduplicationId("b1"));
        List<Message> r2 = receive(url);
        eq(bodies(r2), List.of("b1"), "only the unlocked group g2");
        for (Message m : List.of(r2.get(0), r1.get(0))) c.deleteMessage(b -> b.queueUrl(url).receiptHandle(m.receiptHandle()));
        eq(drain(url, 2), List.of("a2", "a3"), "rest of g1 in order, duplicate dropped");
        c.setQueueAttributes(b -> b.queueUrl(url).attributesWithStrings(Map.of("ContentBasedDeduplication", "true")));
        for (int i = 0; i < 2; i++) c.sendMessage(x -> x.queueUrl(url).messageBody("same").messageGroupId("g3"));
        eq(drain(url, 1), List.of("same"), "content-based deduplication");
        List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
        for (String b : List.of("c1", "c2", "c3", "c4")) entries.add(SendMessageBatchRequestEntry.builder().id(b).messageBody(b).messageGroupId("g4").build());
        eq(c.sendMessageBatch(b -> b.queueUrl(url).entries(entries)).successful().size(), 4, "FIFO batch accepted");
        eq(drain(url, 4), List.of("c1", "c2", "c3", "c4"), "FIFO batch order");
        return "sequence numbers, group lock, explicit and content-based dedup, batch order ok";
    }

    static List<String> drain(String url, int n) {
        List<String> out = new ArrayList<>();
        within(3000, () -> {
            for (Message m : receive(url)) {
                out.add(m.body());
                c.deleteMessage(b -> b.queueUrl(url).receiptHandle(m.receiptHandle()));
            }
            return out.size() >= n;
        });
        return out;
    }

    static Object deadLetter() {
        String dlq = create("dlq", Map.of(), Map.of());
        String dlqArn = attrs(dlq, "QueueArn").get("QueueArn");
        String src = create("src", Map.of("RedrivePolicy", "{\"deadLetterTargetArn\":\"" + dlqArn + "\",\"maxReceiveCount\":1}"), Map.of());
        String srcArn = attrs(src, "QueueArn").get("QueueArn");
        SendMessageResponse sent = c.sendMessage(b -> b.queueUrl(src).messageBody("poison"));
        eq(bodies(receive(ReceiveMessageRequest.builder().queueUrl(src).visibilityTimeout(0))), List.of("poison"), "1st receive");
        eq(receive(ReceiveMessageRequest.builder().queueUrl(src).visibilityTimeout(0)).size(), 0, "2nd receive (moved to the DLQ)");
        List<Message> dl = new ArrayList<>();
        within(3000, () -> { dl.addAll(receive(ReceiveMessageRequest.builder().queueUrl(dlq).visibilityTimeout(0).messageSystemAttributeNamesWithStrings("All"))); return !dl.isEmpty(); });
        eq(dl.size(), 1, "messages in the DLQ");
        eq(dl.get(0).messageId(), sent.messageId(), "DLQ message id");
        eq(dl.get(0).attributesAsStrings().get("DeadLetterQueueSourceArn"), srcArn, "DeadLetterQueueSourceArn");
        eq(c.listDeadLetterSourceQueues(b -> b.queueUrl(dlq)).queueUrls(), List.of(src), "ListDeadLetterSourceQueues");
        String handle = c.startMessageMoveTask(b -> b.sourceArn(dlqArn)).taskHandle();
        check(handle != null && !handle.isEmpty(), "no TaskHandle");
        ListMessageMoveTasksResultEntry[] task = new ListMessageMoveTasksResultEntry[1];
        boolean done = within(5000, () -> {
            List<ListMessageMoveTasksResultEntry> l = c.listMessageMoveTasks(b -> b.sourceArn(dlqArn)).results();
            if (!l.isEmpty()) task[0] = l.get(0);
            return task[0] != null && "COMPLETED".equals(task[0].status());
        });
        check(done, "move task not COMPLETED: " + task[0]);
        eq(task[0].approximateNumberOfMessagesMoved(), 1L, "ApproximateNumberOfMessagesMoved");
        eq(bodies(receiveN(src, 1, 3000)), List.of("poison"), "message back in the source queue");
        eq(attrs(dlq, "ApproximateNumberOfMessages").get("ApproximateNumberOfMessages"), "0", "DLQ empty after the move");
        return "moved to the DLQ on the 2nd receive; ListDeadLetterSourceQueues; move task COMPLETED, message redriven";
    }

    static Object tags() {
        String url = create("tags", Map.of(), Map.of("env", "test", "team", "a"));
        eq(c.listQueueTags(b -> b.queueUrl(url)).tags(), Map.of("env", "test", "team", "a"), "tags from CreateQueue");
        c.tagQueue(b -> b.queueUrl(url).tags(Map.of("team", "b", "cost-center", "42")));
        eq(c.listQueueTags(b -> b.queueUrl(url)).tags(), Map.of("cost-center", "42", "env", "test", "team", "b"), "after TagQueue");
        c.untagQueue(b -> b.queueUrl(url).tagKeys("env", "absent"));
        eq(c.listQueueTags(b -> b.queueUrl(url)).tags(), Map.of("cost-center", "42", "team", "b"), "after UntagQueue");
        return "create with tags, tag (overwrite), untag (absent key too) ok";
    }

    static Object errorsTyped() {
        String url = create("err", Map.of(), Map.of());
        String missing = name("missing");
        String missingUrl = url.substring(0, url.lastIndexOf('/') + 1) + missing;
        List<String> seen = new ArrayList<>();
        seen.add("GetQueueUrl missing -> " + expect(QueueDoesNotExistException.class, () -> c.getQueueUrl(b -> b.queueName(missing)), "GetQueueUrl missing"));
        seen.add("SendMessage missing -> " + expect(QueueDoesNotExistException.class, () -> c.sendMessage(b -> b.queueUrl(missingUrl).messageBody("x")), "SendMessage to a missing queue"));
        seen.add("DeleteMessage garbage -> " + expect(ReceiptHandleIsInvalidException.class, () -> c.deleteMessage(b -> b.queueUrl(url).receiptHandle("garbage")), "DeleteMessage bad handle"));
        seen.add("SendMessageBatch empty -> " + expect(EmptyBatchRequestException.class, () -> c.sendMessageBatch(b -> b.queueUrl(url).entries(List.of())), "SendMessageBatch empty"));
        seen.add("DeleteMessageBatch empty -> " + expect(EmptyBatchRequestException.class, () -> c.deleteMessageBatch(b -> b.queueUrl(url).entries(List.of())), "DeleteMessageBatch empty"));
        seen.add("GetQueueAttributes Foobar -> " + expect(InvalidAttributeNameException.class, () -> c.getQueueAttributes(b -> b.queueUrl(url).attributeNamesWithStrings("Foobar")), "GetQueueAttributes unknown"));
        try {
            c.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(11));
            throw new Fail("MaxNumberOfMessages=11 accepted");
        } catch (SqsException e) {
            check(e.awsErrorDetails().errorCode().contains("InvalidParameterValue"), "MaxNumberOfMessages=11: " + e.awsErrorDetails().errorCode());
            seen.add("ReceiveMessage MaxNumberOfMessages=11 -> " + e.awsErrorDetails().errorCode());
        }
        return String.join("; ", seen);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2 && args.length != 3) { System.err.println("usage: SdkV2 <endpoint> <results.json> [<sns-results.json>]"); System.exit(2); }
        endpoint = args[0].replaceAll("/+$", "");
        c = SqsClient.builder()
                .endpointOverride(URI.create(endpoint))
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("AKIAIOSFODNN7EXAMPLE", "secret")))
                .httpClient(ApacheHttpClient.create())
                .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry()))
                .build();
        Map<String, Scenario> s = new LinkedHashMap<>();
        s.put("queue_lifecycle", SdkV2::queueLifecycle);
        s.put("list_queues_pagination", SdkV2::listQueuesPagination);
        s.put("send_receive_delete_attributes", SdkV2::sendReceiveDeleteAttributes);
        s.put("batches_partial_failure", SdkV2::batchesPartialFailure);
        s.put("visibility_change_release", SdkV2::visibilityChangeRelease);
        s.put("delay", SdkV2::delay);
        s.put("long_polling", SdkV2::longPolling);
        s.put("fifo_order_group_lock_dedup", SdkV2::fifo);
        s.put("dead_letter_and_move_task", SdkV2::deadLetter);
        s.put("tags", SdkV2::tags);
        s.put("errors_typed", SdkV2::errorsTyped);
        int rc = Harness.run("aws-sdk-java-v2 sqs", VersionInfo.SDK_VERSION, "json",
                Map.of("java", System.getProperty("java.version"), "md5_interceptor", "on (default)"), args[1], s, () -> {
                    for (String u : created) { try { c.deleteQueue(b -> b.queueUrl(u)); } catch (Exception ignored) { } }
                    created.clear();
                });
        c.close();
        if (args.length == 3) rc = Math.max(rc, SnsV2.run(endpoint, args[2]));
        System.exit(rc);
    }
}
