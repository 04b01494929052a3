package dev.retsu.compat;

import static dev.retsu.compat.Harness.*;

import java.nio.ByteBuffer;
import java.util.*;
import java.util.stream.Collectors;

import com.amazonaws.AmazonServiceException;
import com.amazonaws.ClientConfiguration;
import com.amazonaws.auth.AWSStaticCredentialsProvider;
import com.amazonaws.auth.BasicAWSCredentials;
import com.amazonaws.client.builder.AwsClientBuilder.EndpointConfiguration;
import com.amazonaws.services.sqs.AmazonSQS;
import com.amazonaws.services.sqs.AmazonSQSClientBuilder;
import com.amazonaws.services.sqs.model.*;
import com.amazonaws.util.VersionInfoUtils;

/**
 * The AWS SDK for Java 1.x (com.amazonaws:aws-java-sdk-sqs) against a fresh
 * retsu. One source, two pinned releases (compat/java/sdk-v1-query: 1.12.583,
 * the last on the query protocol, whose QueueUrlHandler posts each
 * queue-scoped request to the queue URL's own path; compat/java/sdk-v1-json:
 * 1.12.797, AWS JSON 1.0). The SDK's MessageMD5ChecksumHandler validates the
 * body and attribute MD5s of every send and receive.
 *
 *   java -cp ... dev.retsu.compat.SdkV1 <endpoint> <results.json> <json|query>
 */
public final class SdkV1 {
    static AmazonSQS c;
    static String endpoint;
    static final List<String> created = new ArrayList<>();

    static String create(String stem, Map<String, String> attrs, Map<String, String> tags) {
        String name = name(stem) + ("true".equals(attrs.get("FifoQueue")) ? ".fifo" : "");
        CreateQueueRequest r = new CreateQueueRequest(name).withAttributes(attrs);
        if (!tags.isEmpty()) r.setTags(tags);
        String url = c.createQueue(r).getQueueUrl();
        created.add(url);
        return url;
    }

    static Map<String, String> attrs(String url, String... names) {
        return c.getQueueAttributes(new GetQueueAttributesRequest(url).withAttributeNames(names)).getAttributes();
    }

    static List<Message> receive(String url) { return receive(new ReceiveMessageRequest(url)); }

    static List<Message> receive(ReceiveMessageRequest r) {
        if (r.getMaxNumberOfMessages() == null) r.setMaxNumberOfMessages(10);
        return c.receiveMessage(r).getMessages();
    }

    static List<Message> receiveN(String url, int n, long ms) {
        List<Message> got = new ArrayList<>();
        within(ms, () -> { got.addAll(receive(url)); return got.size() >= n; });
        return got;
    }

    static List<String> bodies(List<Message> ms) { return ms.stream().map(Message::getBody).collect(Collectors.toList()); }

    static List<String> sorted(Collection<String> s) { List<String> l = new ArrayList<>(s); Collections.sort(l); return l; }

    static String expect(Class<? extends AmazonServiceException> type, Runnable fn, String what) {
        try {
            fn.run();
        } catch (AmazonServiceException e) {
            check(type.isInstance(e), what + ": expected " + type.getSimpleName() + ", got " + e.getClass().getSimpleName()
                    + " (" + e.getErrorCode() + ": " + e.getErrorMessage() + ")");
            return e.getErrorCode();
        }
        throw new Fail(what + ": expected " + type.getSimpleName() + ", the call succeeded");
    }

    static MessageAttributeValue str(String type, String v) { return new MessageAttributeValue().withDataType(type).withStringValue(v); }

    static byte[] bytes(ByteBuffer b) { ByteBuffer d = b.duplicate(); byte[] out = new byte[d.remaining()]; d.get(out); return out; }

    // ------------------------------------------------------------------ scenarios

    static Object queueLifecycle() {
        String url = create("life", Map.of("VisibilityTimeout", "5"), Map.of());
        String name = url.substring(url.lastIndexOf('/') + 1);
        check(url.startsWith(endpoint + "/"), "QueueUrl " + url + " does not lead back to " + endpoint);
        eq(c.getQueueUrl(name).getQueueUrl(), url, "GetQueueUrl");
        Map<String, String> all = attrs(url, "All");
        eq(all.get("VisibilityTimeout"), "5", "VisibilityTimeout");
        eq(all.get("MaximumMessageSize"), "1048576", "MaximumMessageSize");
        check(all.getOrDefault("QueueArn", "").startsWith("arn:aws:sqs:") && all.get("QueueArn").endsWith(":" + name), "QueueArn " + all.get("QueueArn"));
        check(!all.containsKey("FifoQueue"), "standard queue lists FifoQueue");
        eq(attrs(url, "DelaySeconds"), Map.of("DelaySeconds", "0"), "GetQueueAttributes([DelaySeconds])");
        eq(c.createQueue(new CreateQueueRequest(name).withAttributes(Map.of("VisibilityTimeout", "5"))).getQueueUrl(), url, "CreateQueue again, same attributes");
        eq(c.createQueue(name).getQueueUrl(), url, "CreateQueue again, no attributes");
        expect(QueueNameExistsException.class, () -> c.createQueue(new CreateQueueRequest(name).withAttributes(Map.of("VisibilityTimeout", "6"))), "CreateQueue with a different attribute");
        c.setQueueAttributes(url, Map.of("VisibilityTimeout", "7"));
        eq(attrs(url, "VisibilityTimeout").get("VisibilityTimeout"), "7", "VisibilityTimeout after set");
        c.sendMessage(url, "to be purged");
        eq(attrs(url, "ApproximateNumberOfMessages").get("ApproximateNumberOfMessages"), "1", "count before purge");
        c.purgeQueue(new PurgeQueueRequest(url));
        eq(attrs(url, "ApproximateNumberOfMessages").get("ApproximateNumberOfMessages"), "0", "count after purge");
        c.deleteQueue(url);
        String code = expect(QueueDoesNotExistException.class, () -> c.getQueueUrl(name), "GetQueueUrl after DeleteQueue");
        String furl = create("life", Map.of("FifoQueue", "true", "ContentBasedDeduplication", "true"), Map.of());
        Map<String, String> fa = attrs(furl, "All");
        eq(List.of(fa.get("FifoQueue"), fa.get("ContentBasedDeduplication")), List.of("true", "true"), "FIFO attributes");
        return "create/get-url/attributes/idempotent create/QueueNameExists/purge/delete ok; missing queue code " + code;
    }

    static Object listQueuesPagination() {
        String prefix = name("lqp") + "-";
        List<String> made = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            String u = c.createQueue(prefix + i).getQueueUrl();
            created.add(u);
            made.add(u);
        }
        create("other", Map.of(), Map.of());
        Collections.sort(made);
        ListQueuesResult whole = c.listQueues(new ListQueuesRequest(prefix));
        eq(sorted(whole.getQueueUrls()), made, "ListQueues(prefix)");
        check(whole.getNextToken() == null, "NextToken without MaxResults");
        List<String> seen = new ArrayList<>();
        int pages = 0;
        String token = null;
        do {
            ListQueuesResult page = c.listQueues(new ListQueuesRequest(prefix).withMaxResults(2).withNextToken(token));
            pages++;
            check(page.getQueueUrls().size() <= 2, "page of " + page.getQueueUrls().size() + " with MaxResults 2");
            seen.addAll(page.getQueueUrls());
            token = page.getNextToken();
        } while (token != null && pages < 6);
        eq(sorted(seen), made, "union of pages");
        eq(pages, 3, "pages for 5 queues at MaxResults 2");
        eq(c.listQueues(prefix + "zzz").getQueueUrls().size(), 0, "ListQueues with no match");
        return "prefix filter, 3 pages of MaxResults 2, empty match ok";
    }

    static Object sendReceiveDeleteAttributes() {
        String url = create("srd", Map.of(), Map.of());
        String body = "h\u00e9llo <w\u00f6rld> & \"quotes\" \u2713 \ud83d\ude00 \r\n\ttab ]]>";
        byte[] bin = {0, 1, 2, (byte) 254, (byte) 255};
        Map<String, MessageAttributeValue> mattrs = Map.of(
                "s", str("String", "hello \u2713"), "n", str("Number", "12.5"),
                "b", new MessageAttributeValue().withDataType("Binary").withBinaryValue(ByteBuffer.wrap(bin)),
                "custom", str("String.json", "{\"k\":1}"));
        Map<String, Attr> want = Map.of("s", Attr.str("String", "hello \u2713"), "n", Attr.str("Number", "12.5"),
                "b", Attr.bin("Binary", bin), "custom", Attr.str("String.json", "{\"k\":1}"));
        SendMessageResult sent = c.sendMessage(new SendMessageRequest(url, body).withMessageAttributes(mattrs)
                .withMessageSystemAttributes(Map.of("AWSTraceHeader", new MessageSystemAttributeValue().withDataType("String").withStringValue(TRACE))));
        eq(sent.getMD5OfMessageBody(), md5Hex(body), "MD5OfMessageBody");
        eq(sent.getMD5OfMessageAttributes(), md5OfAttributes(want), "MD5OfMessageAttributes");
        eq(sent.getMD5OfMessageSystemAttributes(), TRACE_MD5, "MD5OfMessageSystemAttributes");
        check(sent.getSequenceNumber() == null, "standard queue returned a SequenceNumber");
        SendMessageResult plain = c.sendMessage(url, "plain");
        check(plain.getMD5OfMessageAttributes() == null, "MD5OfMessageAttributes without attributes");

        List<Message> msgs = receive(new ReceiveMessageRequest(url).withMessageAttributeNames("All").withAttributeNames("All").withVisibilityTimeout(30));
        eq(msgs.size(), 2, "messages received");
        Message m = msgs.stream().filter(x -> x.getMessageId().equals(sent.getMessageId())).findFirst().orElseThrow(() -> new Fail("sent message not received"));
        Message p = msgs.stream().filter(x -> x.getMessageId().equals(plain.getMessageId())).findFirst().orElseThrow(() -> new Fail("plain message not received"));
        check(p.getMessageAttributes().isEmpty(), "plain message came back with attributes");
        eq(m.getBody(), body, "Body round trip");
        eq(m.getMD5OfBody(), md5Hex(body), "MD5OfBody");
        eq(new TreeSet<>(m.getMessageAttributes().keySet()), new TreeSet<>(mattrs.keySet()), "received attribute names");
        for (String k : List.of("s", "n", "custom")) {
            eq(m.getMessageAttributes().get(k).getDataType(), mattrs.get(k).getDataType(), "DataType of " + k);
            eq(m.getMessageAttributes().get(k).getStringValue(), mattrs.get(k).getStringValue(), "StringValue of " + k);
        }
        eq(Arrays.toString(bytes(m.getMessageAttributes().get("b").getBinaryValue())), Arrays.toString(bin), "BinaryValue of b");
        eq(m.getMD5OfMessageAttributes(), md5OfAttributes(want), "received MD5OfMessageAttributes");
        Map<String, String> sa = m.getAttributes();
        eq(sa.get("AWSTraceHeader"), TRACE, "AWSTraceHeader");
        eq(sa.get("ApproximateReceiveCount"), "1", "ApproximateReceiveCount");
        check(sa.getOrDefault("SentTimestamp", "").matches("\\d{13}"), "SentTimestamp " + sa.get("SentTimestamp"));
        check(sa.containsKey("SenderId") && sa.containsKey("ApproximateFirstReceiveTimestamp"), "system attributes " + sa.keySet());

        c.changeMessageVisibility(url, m.getReceiptHandle(), 0);
        List<Message> again = receive(new ReceiveMessageRequest(url).withMessageAttributeNames("s", "cu.*").withAttributeNames("ApproximateReceiveCount"));
        eq(again.size(), 1, "receive after release");
        Message a = again.get(0);
        check(!a.getReceiptHandle().equals(m.getReceiptHandle()), "a receive must issue a new receipt handle");
        eq(new TreeSet<>(a.getMessageAttributes().keySet()), new TreeSet<>(List.of("custom", "s")), "filtered attributes (s, cu.*)");
        eq(a.getMD5OfMessageAttributes(), md5OfAttributes(Map.of("s", want.get("s"), "custom", want.get("custom"))), "MD5 of the filtered attributes");
        eq(a.getAttributes(), Map.of("ApproximateReceiveCount", "2"), "selected system attributes");
        for (String h : List.of(a.getReceiptHandle(), p.getReceiptHandle(), a.getReceiptHandle())) c.deleteMessage(url, h);
        Map<String, String> counts = attrs(url, "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible");
        eq(List.of(counts.get("ApproximateNumberOfMessages"), counts.get("ApproximateNumberOfMessagesNotVisible")), List.of("0", "0"), "counts after delete");
        return "String/Number/Binary/custom attributes, AWSTraceHeader, MD5s (body, attributes, filtered, system), SDK MD5 handler on";
    }

    static Object batchesPartialFailure() {
        String url = create("batch", Map.of("MaximumMessageSize", "1024"), Map.of());
        SendMessageBatchResult out = c.sendMessageBatch(new SendMessageBatchRequest(url, List.of(
                new SendMessageBatchRequestEntry("ok1", "one"),
                new SendMessageBatchRequestEntry("ok2", "two").withMessageAttributes(Map.of("k", str("String", "x"))),
                new SendMessageBatchRequestEntry("big", "x".repeat(2000)),
                new SendMessageBatchRequestEntry("bad", "bad \u0000 char"))));
        Map<String, SendMessageBatchResultEntry> ok = out.getSuccessful().stream().collect(Collectors.toMap(SendMessageBatchResultEntry::getId, e -> e));
        Map<String, BatchResultErrorEntry> failed = out.getFailed().stream().collect(Collectors.toMap(BatchResultErrorEntry::getId, e -> e));
        eq(new TreeSet<>(ok.keySet()), new TreeSet<>(List.of("ok1", "ok2")), "Successful ids");
        eq(new TreeSet<>(failed.keySet()), new TreeSet<>(List.of("bad", "big")), "Failed ids");
        eq(ok.get("ok1").getMD5OfMessageBody(), md5Hex("one"), "ok1 MD5OfMessageBody");
        eq(ok.get("ok2").getMD5OfMessageAttributes(), "a45daa70926828a2f0a1db3418e6feb4", "ok2 MD5OfMessageAttributes");
        eq(List.of(failed.get("big").getCode(), failed.get("big").getSenderFault()), List.of("InvalidParameterValue", true), "oversize entry");
        eq(List.of(failed.get("bad").getCode(), failed.get("bad").getSenderFault()), List.of("InvalidMessageContents", true), "invalid character entry");
        List<Message> got = receiveN(url, 2, 3000);
        eq(sorted(bodies(got)), List.of("one", "two"), "received bodies");
        Map<String, String> handle = got.stream().collect(Collectors.toMap(Message::getBody, Message::getReceiptHandle));
        ChangeMessageVisibilityBatchResult cv = c.changeMessageVisibilityBatch(url, List.of(
                new ChangeMessageVisibilityBatchRequestEntry("v1", handle.get("one")).withVisibilityTimeout(0),
                new ChangeMessageVisibilityBatchRequestEntry("v2", "garbage").withVisibilityTimeout(0)));
        eq(cv.getSuccessful().size(), 1, "ChangeMessageVisibilityBatch Successful");
        eq(cv.getFailed().stream().map(e -> e.getId() + "=" + e.getCode()).collect(Collectors.toList()), List.of("v2=ReceiptHandleIsInvalid"), "ChangeMessageVisibilityBatch Failed");
        List<Message> again = receive(url);
        eq(bodies(again), List.of("one"), "released by the batch");
        DeleteMessageBatchResult del = c.deleteMessageBatch(url, List.of(
                new DeleteMessageBatchRequestEntry("d1", again.get(0).getReceiptHandle()),
                new DeleteMessageBatchRequestEntry("d2", handle.get("two")),
                new DeleteMessageBatchRequestEntry("d3", "garbage")));
        eq(del.getSuccessful().size(), 2, "DeleteMessageBatch Successful");
        eq(del.getFailed().stream().map(e -> e.getId() + "=" + e.getCode()).collect(Collectors.toList()), List.of("d3=ReceiptHandleIsInvalid"), "DeleteMessageBatch Failed");
        expect(BatchEntryIdsNotDistinctException.class, () -> c.sendMessageBatch(url, List.of(
                new SendMessageBatchRequestEntry("same", "a"), new SendMessageBatchRequestEntry("same", "b"))), "SendMessageBatch with repeated ids");
        return "send/delete/change-visibility batches with partial failures, MD5s, BatchEntryIdsNotDistinct ok";
    }

    static Object visibilityChangeRelease() {
        String url = create("vis", Map.of("VisibilityTimeout", "30"), Map.of());
        c.sendMessage(url, "v");
        List<Message> r1 = receive(url);
        eq(r1.size(), 1, "first receive");
        eq(receive(url).size(), 0, "receive while in flight");
        c.changeMessageVisibility(url, r1.get(0).getReceiptHandle(), 0);
        eq(receive(new ReceiveMessageRequest(url).withVisibilityTimeout(1)).size(), 1, "receive after release");
        eq(receive(url).size(), 0, "hidden by the 1 s receive override");
        sleep(1300);
        List<Message> r3 = receive(url);
        eq(r3.size(), 1, "visible again after the 1 s override");
        c.changeMessageVisibility(url, r3.get(0).getReceiptHandle(), 1);
        sleep(1300);
        List<Message> r4 = receive(url);
        eq(r4.size(), 1, "visible after the 1 s change");
        c.changeMessageVisibility(url, r4.get(0).getReceiptHandle(), 30);
        eq(receive(url).size(), 0, "after extending");
        c.deleteMessage(url, r4.get(0).getReceiptHandle());
        return "hidden in flight; released by 0; 1 s override and 1 s change expire; extend ok";
    }

    static Object delay() {
        String q1 = create("delay", Map.of(), Map.of());
        String q2 = create("qdelay", Map.of("DelaySeconds", "1"), Map.of());
        c.sendMessage(new SendMessageRequest(q1, "per-message").withDelaySeconds(1));
        c.sendMessageBatch(q1, List.of(new SendMessageBatchRequestEntry("now", "batch-now").withDelaySeconds(0),
                new SendMessageBatchRequestEntry("later", "batch-later").withDelaySeconds(1)));
        c.sendMessage(q2, "queue-delay");
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
        eq(receive(new ReceiveMessageRequest(url).withWaitTimeSeconds(1)).size(), 0, "empty long poll");
        long empty = System.currentTimeMillis() - t;
        check(empty >= 900 && empty < 3500, "empty 1 s long poll took " + empty + " ms");
        t = System.currentTimeMillis();
        Thread sender = new Thread(() -> { sleep(500); c.sendMessage(url, "wake up"); });
        sender.start();
        List<Message> got = receive(new ReceiveMessageRequest(url).withWaitTimeSeconds(5));
        long woke = System.currentTimeMillis() - t;
        sender.join();
        eq(bodies(got), List.of("wake up"), "long poll result");
        check(woke >= 400 && woke < 2500, "woke after " + woke + " ms (send at 500 ms)");
        c.deleteMessage(url, got.get(0).getReceiptHandle());
        c.setQueueAttributes(url, Map.of("ReceiveMessageWaitTimeSeconds", "1"));
        t = System.currentTimeMillis();
        eq(receive(url).size(), 0, "queue-default long poll");
        long qd = System.currentTimeMillis() - t;
        check(qd >= 900 && qd < 3500, "queue-default poll took " + qd + " ms");
        return "empty poll " + empty + " ms; woke after " + woke + " ms; queue-default wait " + qd + " ms";
    }

    static Object fifo() {
        String url = create("fifo", Map.of("FifoQueue", "true"), Map.of());
        List<java.math.BigInteger> seq = new ArrayList<>();
        for (String b : List.of("a1", "a2", "a3")) {
            SendMessageResult r = c.sendMessage(new SendMessageRequest(url, b).withMessageGroupId("g1").withMessageDeduplicationId(b));
            check(r.getSequenceNumber() != null && r.getSequenceNumber().matches("\\d+"), "SequenceNumber " + r.getSequenceNumber());
            seq.add(new java.math.BigInteger(r.getSequenceNumber()));
        }
        check(seq.get(0).compareTo(seq.get(1)) < 0 && seq.get(1).compareTo(seq.get(2)) < 0, "SequenceNumbers not increasing: " + seq);
        c.sendMessage(new SendMessageRequest(url, "a1").withMessageGroupId("g1").withMessageDeduplicationId("a1"));
        List<Message> r1 = receive(new ReceiveMessageRequest(url).withMaxNumberOfMessages(1).withAttributeNames("All"));
        eq(bodies(r1), List.of("a1"), "first FIFO receive");
        Map<String, String> at = r1.get(0).getAttributes();
        eq(List.of(at.get("MessageGroupId"), at.get("MessageDeduplicationId"), at.get("SequenceNumber")), List.of("g1", "a1", seq.get(0).toString()), "FIFO system attributes");
        eq(receive(url).size(), 0, "receive while g1 is locked");
        c.sendMessage(new SendMessageRequest(url, "b1").withMessageGroupId("g2").withMessageDeduplicationId("b1"));
        List<Message> r2 = receive(url);
        eq(bodies(r2), List.of("b1"), "only the unlocked group g2");
        c.deleteMessage(url, r2.get(0).getReceiptHandle());
        c.deleteMessage(url, r1.get(0).getReceiptHandle());
        eq(drain(url, 2), List.of("a2", "a3"), "rest of g1 in order, duplicate dropped");
        c.setQueueAttributes(url, Map.of("ContentBasedDeduplication", "true"));
        for (int i = 0; i < 2; i++) c.sendMessage(new SendMessageRequest(url, "same").withMessageGroupId("g3"));
        eq(drain(url, 1), List.of("same"), "content-based deduplication");
        List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
        for (String b : List.of("c1", "c2", "c3", "c4")) entries.add(new SendMessageBatchRequestEntry(b, b).withMessageGroupId("g4"));
        eq(c.sendMessageBatch(url, entries).getSuccessful().size(), 4, "FIFO batch accepted");
        eq(drain(url, 4), List.of("c1", "c2", "c3", "c4"), "FIFO batch order");
        return "sequence numbers, group lock, explicit and content-based dedup, batch order ok";
    }

    static List<String> drain(String url, int n) {
        List<String> out = new ArrayList<>();
        within(3000, () -> {
            for (Message m : receive(url)) {
                out.add(m.getBody());
                c.deleteMessage(url, m.getReceiptHandle());
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
        SendMessageResult sent = c.sendMessage(src, "poison");
        eq(bodies(receive(new ReceiveMessageRequest(src).withVisibilityTimeout(0))), List.of("poison"), "1st receive");
        eq(receive(new ReceiveMessageRequest(src).withVisibilityTimeout(0)).size(), 0, "2nd receive (moved to the DLQ)");
        List<Message> dl = new ArrayList<>();
        within(3000, () -> { dl.addAll(receive(new ReceiveMessageRequest(dlq).withVisibilityTimeout(0).withAttributeNames("All"))); return !dl.isEmpty(); });
        eq(dl.size(), 1, "messages in the DLQ");
        eq(dl.get(0).getMessageId(), sent.getMessageId(), "DLQ message id");
        eq(dl.get(0).getAttributes().get("DeadLetterQueueSourceArn"), srcArn, "DeadLetterQueueSourceArn");
        eq(c.listDeadLetterSourceQueues(new ListDeadLetterSourceQueuesRequest().withQueueUrl(dlq)).getQueueUrls(), List.of(src), "ListDeadLetterSourceQueues");
        String handle = c.startMessageMoveTask(new StartMessageMoveTaskRequest().withSourceArn(dlqArn)).getTaskHandle();
        check(handle != null && !handle.isEmpty(), "no TaskHandle");
        ListMessageMoveTasksResultEntry[] task = new ListMessageMoveTasksResultEntry[1];
        boolean done = within(5000, () -> {
            List<ListMessageMoveTasksResultEntry> l = c.listMessageMoveTasks(new ListMessageMoveTasksRequest().withSourceArn(dlqArn)).getResults();
            if (!l.isEmpty()) task[0] = l.get(0);
            return task[0] != null && "COMPLETED".equals(task[0].getStatus());
        });
        check(done, "move task not COMPLETED: " + task[0]);
        eq(task[0].getApproximateNumberOfMessagesMoved(), 1L, "ApproximateNumberOfMessagesMoved");
        eq(bodies(receiveN(src, 1, 3000)), List.of("poison"), "message back in the source queue");
        eq(attrs(dlq, "ApproximateNumberOfMessages").get("ApproximateNumberOfMessages"), "0", "DLQ empty after the move");
        return "moved to the DLQ on the 2nd receive; ListDeadLetterSourceQueues; move task COMPLETED, message redriven";
    }

    static Object tags() {
        String url = create("tags", Map.of(), Map.of("env", "test", "team", "a"));
        eq(c.listQueueTags(url).getTags(), Map.of("env", "test", "team", "a"), "tags from CreateQueue");
        c.tagQueue(url, Map.of("team", "b", "cost-center", "42"));
        eq(c.listQueueTags(url).getTags(), Map.of("cost-center", "42", "env", "test", "team", "b"), "after TagQueue");
        c.untagQueue(url, List.of("env", "absent"));
        eq(c.listQueueTags(url).getTags(), Map.of("cost-center", "42", "team", "b"), "after UntagQueue");
        return "create with tags, tag (overwrite), untag (absent key too) ok";
    }

    static Object errorsTyped() {
        String url = create("err", Map.of(), Map.of());
        String missing = name("missing");
        String missingUrl = url.substring(0, url.lastIndexOf('/') + 1) + missing;
        List<String> seen = new ArrayList<>();
        seen.add("GetQueueUrl missing -> " + expect(QueueDoesNotExistException.class, () -> c.getQueueUrl(missing), "GetQueueUrl missing"));
        seen.add("SendMessage missing -> " + expect(QueueDoesNotExistException.class, () -> c.sendMessage(missingUrl, "x"), "SendMessage to a missing queue"));
        seen.add("DeleteMessage garbage -> " + expect(ReceiptHandleIsInvalidException.class, () -> c.deleteMessage(url, "garbage"), "DeleteMessage bad handle"));
        seen.add("SendMessageBatch empty -> " + expect(EmptyBatchRequestException.class, () -> c.sendMessageBatch(url, List.of()), "SendMessageBatch empty"));
        seen.add("DeleteMessageBatch empty -> " + expect(EmptyBatchRequestException.class, () -> c.deleteMessageBatch(url, List.of()), "DeleteMessageBatch empty"));
        seen.add("GetQueueAttributes Foobar -> " + expect(InvalidAttributeNameException.class, () -> c.getQueueAttributes(url, List.of("Foobar")), "GetQueueAttributes unknown"));
        try {
            c.receiveMessage(new ReceiveMessageRequest(url).withMaxNumberOfMessages(11));
            throw new Fail("MaxNumberOfMessages=11 accepted");
        } catch (AmazonServiceException e) {
            check(e.getErrorCode().contains("InvalidParameterValue"), "MaxNumberOfMessages=11: " + e.getErrorCode());
            seen.add("ReceiveMessage MaxNumberOfMessages=11 -> " + e.getErrorCode());
        }
        return String.join("; ", seen);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) { System.err.println("usage: SdkV1 <endpoint> <results.json> <json|query>"); System.exit(2); }
        endpoint = args[0].replaceAll("/+$", "");
        c = AmazonSQSClientBuilder.standard()
                .withEndpointConfiguration(new EndpointConfiguration(endpoint, "us-east-1"))
                .withCredentials(new AWSStaticCredentialsProvider(new BasicAWSCredentials("AKIAIOSFODNN7EXAMPLE", "secret")))
                .withClientConfiguration(new ClientConfiguration().withMaxErrorRetry(0).withSocketTimeout(40000))
                .build();
        Map<String, Scenario> s = new LinkedHashMap<>();
        s.put("queue_lifecycle", SdkV1::queueLifecycle);
        s.put("list_queues_pagination", SdkV1::listQueuesPagination);
        s.put("send_receive_delete_attributes", SdkV1::sendReceiveDeleteAttributes);
        s.put("batches_partial_failure", SdkV1::batchesPartialFailure);
        s.put("visibility_change_release", SdkV1::visibilityChangeRelease);
        s.put("delay", SdkV1::delay);
        s.put("long_polling", SdkV1::longPolling);
        s.put("fifo_order_group_lock_dedup", SdkV1::fifo);
        s.put("dead_letter_and_move_task", SdkV1::deadLetter);
        s.put("tags", SdkV1::tags);
        s.put("errors_typed", SdkV1::errorsTyped);
        // The protocol this release speaks is what its pom pins it for; the
        // wire proxy in compat/run.sh checks it against every request.
        int rc = Harness.run("aws-java-sdk-sqs (v1)", VersionInfoUtils.getVersion(), args[2],
                Map.of("java", System.getProperty("java.version")), args[1], s, () -> {
                    for (String u : created) { try { c.deleteQueue(u); } catch (Exception ignored) { } }
                    created.clear();
                });
        c.shutdown();
        System.exit(rc);
    }
}
