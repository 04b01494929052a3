// The AWS SDK for Go v1 (github.com/aws/aws-sdk-go/service/sqs) against a
// fresh retsu. One source, two pinned releases:
//
//	go.mod      v1.46.7, before the November 2023 switch: query protocol
//	go.last.mod v1.55.8, the last release: AWS JSON 1.0
//
//	go build -modfile=go.last.mod -o sdkv1-json . && sdkv1-json <endpoint> <results.json>
//
// The SDK validates MD5OfMessageBody on send, batch send and receive itself
// (service/sqs/checksums.go); the scenarios check the attribute MD5s
// byte-exactly. Error codes are compared with what AWS sends on the wire
// (the legacy query codes, also carried by x-amzn-query-error on JSON).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go/aws"
	"github.com/aws/aws-sdk-go/aws/awserr"
	"github.com/aws/aws-sdk-go/aws/credentials"
	"github.com/aws/aws-sdk-go/aws/session"
	"github.com/aws/aws-sdk-go/service/sqs"

	h "retsu.dev/compat/harness"
)

var (
	c        *sqs.SQS
	endpoint string
	created  []string
	sv       = aws.String
	iv       = aws.Int64
)

func sm(m map[string]string) map[string]*string {
	if m == nil {
		return nil
	}
	return aws.StringMap(m)
}

func create(stem string, attrs map[string]string, tags map[string]string) string {
	name := h.Name(stem)
	if attrs["FifoQueue"] == "true" {
		name += ".fifo"
	}
	out, err := c.CreateQueue(&sqs.CreateQueueInput{QueueName: &name, Attributes: sm(attrs), Tags: sm(tags)})
	h.Must(err, "CreateQueue "+name)
	created = append(created, *out.QueueUrl)
	return *out.QueueUrl
}

func attrs(url string, names ...string) map[string]string {
	out, err := c.GetQueueAttributes(&sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: aws.StringSlice(names)})
	h.Must(err, "GetQueueAttributes")
	return aws.StringValueMap(out.Attributes)
}

func receive(in sqs.ReceiveMessageInput) []*sqs.Message {
	if in.MaxNumberOfMessages == nil {
		in.MaxNumberOfMessages = iv(10)
	}
	out, err := c.ReceiveMessage(&in)
	h.Must(err, "ReceiveMessage")
	return out.Messages
}

func receiveN(url string, n int, d time.Duration) []*sqs.Message {
	var got []*sqs.Message
	h.Within(d, func() bool {
		got = append(got, receive(sqs.ReceiveMessageInput{QueueUrl: &url})...)
		return len(got) >= n
	})
	return got
}

func bodies(ms []*sqs.Message) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, *m.Body)
	}
	return out
}

func sorted(s []string) []string { sort.Strings(s); return s }

// expectCode checks err is an awserr.Error with the code AWS sends.
func expectCode(err error, code, what string) string {
	h.Check(err != nil, "%s: expected %s, the call succeeded", what, code)
	ae, ok := err.(awserr.Error)
	h.Check(ok, "%s: expected an awserr.Error, got %T: %v", what, err, err)
	h.Check(ae.Code() == code, "%s: expected code %s, got %s (%s)", what, code, ae.Code(), ae.Message())
	return ae.Code()
}

// ------------------------------------------------------------------ scenarios

func queueLifecycle() any {
	url := create("life", map[string]string{"VisibilityTimeout": "5"}, nil)
	name := url[strings.LastIndex(url, "/")+1:]
	h.Check(strings.HasPrefix(url, endpoint+"/"), "QueueUrl %s does not lead back to %s", url, endpoint)
	got, err := c.GetQueueUrl(&sqs.GetQueueUrlInput{QueueName: &name})
	h.Must(err, "GetQueueUrl")
	h.Eq(*got.QueueUrl, url, "GetQueueUrl")
	all := attrs(url, "All")
	h.Eq(all["VisibilityTimeout"], "5", "VisibilityTimeout")
	h.Eq(all["MaximumMessageSize"], "1048576", "MaximumMessageSize")
	h.Check(strings.HasPrefix(all["QueueArn"], "arn:aws:sqs:") && strings.HasSuffix(all["QueueArn"], ":"+name), "QueueArn %q", all["QueueArn"])
	_, isFifo := all["FifoQueue"]
	h.Check(!isFifo, "standard queue lists FifoQueue")
	h.Eq(attrs(url, "DelaySeconds"), map[string]string{"DelaySeconds": "0"}, "GetQueueAttributes([DelaySeconds])")
	again, err := c.CreateQueue(&sqs.CreateQueueInput{QueueName: &name, Attributes: sm(map[string]string{"VisibilityTimeout": "5"})})
	h.Must(err, "CreateQueue again, same attributes")
	h.Eq(*again.QueueUrl, url, "CreateQueue again")
	_, err = c.CreateQueue(&sqs.CreateQueueInput{QueueName: &name, Attributes: sm(map[string]string{"VisibilityTimeout": "6"})})
	expectCode(err, "QueueAlreadyExists", "CreateQueue with a different attribute")
	_, err = c.SetQueueAttributes(&sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: sm(map[string]string{"VisibilityTimeout": "7"})})
	h.Must(err, "SetQueueAttributes")
	h.Eq(attrs(url, "VisibilityTimeout")["VisibilityTimeout"], "7", "VisibilityTimeout after set")
	_, err = c.SendMessage(&sqs.SendMessageInput{QueueUrl: &url, MessageBody: sv("to be purged")})
	h.Must(err, "SendMessage")
	h.Eq(attrs(url, "ApproximateNumberOfMessages")["ApproximateNumberOfMessages"], "1", "count before purge")
	_, err = c.PurgeQueue(&sqs.PurgeQueueInput{QueueUrl: &url})
	h.Must(err, "PurgeQueue")
	h.Eq(attrs(url, "ApproximateNumberOfMessages")["ApproximateNumberOfMessages"], "0", "count after purge")
	_, err = c.DeleteQueue(&sqs.DeleteQueueInput{QueueUrl: &url})
	h.Must(err, "DeleteQueue")
	_, err = c.GetQueueUrl(&sqs.GetQueueUrlInput{QueueName: &name})
	expectCode(err, "AWS.SimpleQueueService.NonExistentQueue", "GetQueueUrl after DeleteQueue")
	furl := create("life", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}, nil)
	fa := attrs(furl, "All")
	h.Eq([]string{fa["FifoQueue"], fa["ContentBasedDeduplication"]}, []string{"true", "true"}, "FIFO attributes")
	return "create/get-url/attributes/idempotent create/QueueAlreadyExists/purge/delete ok"
}

func listQueuesPagination() any {
	prefix := h.Name("lqp") + "-"
	var made []string
	for i := 0; i < 5; i++ {
		out, err := c.CreateQueue(&sqs.CreateQueueInput{QueueName: sv(fmt.Sprintf("%s%d", prefix, i))})
		h.Must(err, "CreateQueue")
		created = append(created, *out.QueueUrl)
		made = append(made, *out.QueueUrl)
	}
	create("other", nil, nil)
	sort.Strings(made)
	whole, err := c.ListQueues(&sqs.ListQueuesInput{QueueNamePrefix: &prefix})
	h.Must(err, "ListQueues")
	h.Eq(sorted(aws.StringValueSlice(whole.QueueUrls)), made, "ListQueues(prefix)")
	h.Check(whole.NextToken == nil, "NextToken without MaxResults")
	var seen []string
	pages := 0
	err = c.ListQueuesPages(&sqs.ListQueuesInput{QueueNamePrefix: &prefix, MaxResults: iv(2)}, func(p *sqs.ListQueuesOutput, last bool) bool {
		pages++
		h.Check(len(p.QueueUrls) <= 2, "page of %d with MaxResults 2", len(p.QueueUrls))
		seen = append(seen, aws.StringValueSlice(p.QueueUrls)...)
		return pages < 6
	})
	h.Must(err, "ListQueuesPages")
	h.Eq(sorted(seen), made, "union of pages")
	h.Eq(pages, 3, "pages for 5 queues at MaxResults 2")
	none, err := c.ListQueues(&sqs.ListQueuesInput{QueueNamePrefix: sv(prefix + "zzz")})
	h.Must(err, "ListQueues no match")
	h.Eq(len(none.QueueUrls), 0, "ListQueues with no match")
	return "prefix filter, ListQueuesPages with 3 pages of MaxResults 2, empty match ok"
}

func mav(dt, s string, b []byte) *sqs.MessageAttributeValue {
	v := &sqs.MessageAttributeValue{DataType: sv(dt)}
	if b != nil {
		v.BinaryValue = b
	} else {
		v.StringValue = sv(s)
	}
	return v
}

func sendReceiveDeleteAttributes() any {
	url := create("srd", nil, nil)
	body := "héllo <wörld> & \"quotes\" ✓ 😀 \r\n\ttab ]]>"
	s, n, ct := "hello ✓", "12.5", `{"k":1}`
	bin := []byte{0, 1, 2, 254, 255}
	mattrs := map[string]*sqs.MessageAttributeValue{
		"s": mav("String", s, nil), "n": mav("Number", n, nil), "b": mav("Binary", "", bin), "custom": mav("String.json", ct, nil),
	}
	want := map[string]h.Attr{"s": {DataType: "String", String: &s}, "n": {DataType: "Number", String: &n},
		"b": {DataType: "Binary", Binary: bin}, "custom": {DataType: "String.json", String: &ct}}
	sent, err := c.SendMessage(&sqs.SendMessageInput{
		QueueUrl: &url, MessageBody: &body, MessageAttributes: mattrs,
		MessageSystemAttributes: map[string]*sqs.MessageSystemAttributeValue{
			"AWSTraceHeader": {DataType: sv("String"), StringValue: sv(h.Trace)}},
	})
	h.Must(err, "SendMessage")
	h.Eq(*sent.MD5OfMessageBody, h.MD5Hex(body), "MD5OfMessageBody")
	h.Eq(aws.StringValue(sent.MD5OfMessageAttributes), h.MD5OfAttributes(want), "MD5OfMessageAttributes")
	h.Eq(aws.StringValue(sent.MD5OfMessageSystemAttributes), h.TraceMD5, "MD5OfMessageSystemAttributes")
	h.Check(sent.SequenceNumber == nil, "standard queue returned a SequenceNumber")
	plain, err := c.SendMessage(&sqs.SendMessageInput{QueueUrl: &url, MessageBody: sv("plain")})
	h.Must(err, "SendMessage plain")
	h.Check(plain.MD5OfMessageAttributes == nil, "MD5OfMessageAttributes without attributes")

	msgs := receive(sqs.ReceiveMessageInput{QueueUrl: &url, MessageAttributeNames: aws.StringSlice([]string{"All"}),
		AttributeNames: aws.StringSlice([]string{"All"}), VisibilityTimeout: iv(30)})
	h.Eq(len(msgs), 2, "messages received")
	var m, p *sqs.Message
	for _, x := range msgs {
		if *x.MessageId == *sent.MessageId {
			m = x
		} else {
			p = x
		}
	}
	h.Check(m != nil && p != nil, "sent messages not both received")
	h.Eq(len(p.MessageAttributes), 0, "attributes of the plain message")
	h.Eq(*m.Body, body, "Body round trip")
	h.Eq(*m.MD5OfBody, h.MD5Hex(body), "MD5OfBody")
	h.Eq(len(m.MessageAttributes), 4, "received attribute count")
	for k, v := range mattrs {
		g := m.MessageAttributes[k]
		h.Check(g != nil, "attribute %s missing", k)
		h.Eq(aws.StringValue(g.DataType), *v.DataType, "DataType of "+k)
		h.Eq(aws.StringValue(g.StringValue), aws.StringValue(v.StringValue), "StringValue of "+k)
		h.Eq(fmt.Sprint(g.BinaryValue), fmt.Sprint(v.BinaryValue), "BinaryValue of "+k)
	}
	h.Eq(aws.StringValue(m.MD5OfMessageAttributes), h.MD5OfAttributes(want), "received MD5OfMessageAttributes")
	sa := aws.StringValueMap(m.Attributes)
	h.Eq(sa["AWSTraceHeader"], h.Trace, "AWSTraceHeader")
	h.Eq(sa["ApproximateReceiveCount"], "1", "ApproximateReceiveCount")
	ts, _ := strconv.ParseInt(sa["SentTimestamp"], 10, 64)
	h.Check(len(sa["SentTimestamp"]) == 13 && time.Since(time.UnixMilli(ts)).Abs() < time.Minute, "SentTimestamp %q", sa["SentTimestamp"])
	h.Check(sa["SenderId"] != "" && sa["ApproximateFirstReceiveTimestamp"] != "", "SenderId/ApproximateFirstReceiveTimestamp missing: %v", sa)

	_, err = c.ChangeMessageVisibility(&sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: iv(0)})
	h.Must(err, "ChangeMessageVisibility 0")
	again := receive(sqs.ReceiveMessageInput{QueueUrl: &url, MessageAttributeNames: aws.StringSlice([]string{"s", "cu.*"}),
		AttributeNames: aws.StringSlice([]string{"ApproximateReceiveCount"})})
	h.Eq(len(again), 1, "receive after release")
	a := again[0]
	h.Check(*a.ReceiptHandle != *m.ReceiptHandle, "a receive must issue a new receipt handle")
	h.Eq(len(a.MessageAttributes), 2, "filtered attributes (s, cu.*)")
	h.Eq(aws.StringValue(a.MD5OfMessageAttributes), h.MD5OfAttributes(map[string]h.Attr{"s": want["s"], "custom": want["custom"]}), "MD5 of the filtered attributes")
	h.Eq(aws.StringValueMap(a.Attributes), map[string]string{"ApproximateReceiveCount": "2"}, "selected system attributes")
	for _, x := range []*string{a.ReceiptHandle, p.ReceiptHandle, a.ReceiptHandle} {
		_, err = c.DeleteMessage(&sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: x})
		h.Must(err, "DeleteMessage")
	}
	counts := attrs(url, "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible")
	h.Eq([]string{counts["ApproximateNumberOfMessages"], counts["ApproximateNumberOfMessagesNotVisible"]}, []string{"0", "0"}, "counts after delete")
	return "String/Number/Binary/custom attributes, AWSTraceHeader, MD5s (body, attributes, filtered, system), SDK MD5 validation on"
}

func batchesPartialFailure() any {
	url := create("batch", map[string]string{"MaximumMessageSize": "1024"}, nil)
	out, err := c.SendMessageBatch(&sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []*sqs.SendMessageBatchRequestEntry{
		{Id: sv("ok1"), MessageBody: sv("one")},
		{Id: sv("ok2"), MessageBody: sv("two"), MessageAttributes: map[string]*sqs.MessageAttributeValue{"k": mav("String", "x", nil)}},
		{Id: sv("big"), MessageBody: sv(strings.Repeat("x", 2000))},
		{Id: sv("bad"), MessageBody: sv("bad \x00 char")},
	}})
	h.Must(err, "SendMessageBatch")
	ok := map[string]*sqs.SendMessageBatchResultEntry{}
	for _, e := range out.Successful {
		ok[*e.Id] = e
	}
	failed := map[string]*sqs.BatchResultErrorEntry{}
	for _, e := range out.Failed {
		failed[*e.Id] = e
	}
	h.Eq(len(ok), 2, "Successful entries")
	h.Check(failed["big"] != nil && failed["bad"] != nil, "Failed entries: %v", out.Failed)
	h.Eq(*ok["ok1"].MD5OfMessageBody, h.MD5Hex("one"), "ok1 MD5OfMessageBody")
	h.Eq(aws.StringValue(ok["ok2"].MD5OfMessageAttributes), "a45daa70926828a2f0a1db3418e6feb4", "ok2 MD5OfMessageAttributes")
	h.Eq([]any{aws.StringValue(failed["big"].Code), aws.BoolValue(failed["big"].SenderFault)}, []any{"InvalidParameterValue", true}, "oversize entry")
	h.Eq([]any{aws.StringValue(failed["bad"].Code), aws.BoolValue(failed["bad"].SenderFault)}, []any{"InvalidMessageContents", true}, "invalid character entry")
	got := receiveN(url, 2, 3*time.Second)
	h.Eq(sorted(bodies(got)), []string{"one", "two"}, "received bodies")
	handle := map[string]*string{}
	for _, m := range got {
		handle[*m.Body] = m.ReceiptHandle
	}
	cv, err := c.ChangeMessageVisibilityBatch(&sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &url, Entries: []*sqs.ChangeMessageVisibilityBatchRequestEntry{
		{Id: sv("v1"), ReceiptHandle: handle["one"], VisibilityTimeout: iv(0)},
		{Id: sv("v2"), ReceiptHandle: sv("garbage"), VisibilityTimeout: iv(0)},
	}})
	h.Must(err, "ChangeMessageVisibilityBatch")
	h.Eq(len(cv.Successful), 1, "ChangeMessageVisibilityBatch Successful")
	h.Check(len(cv.Failed) == 1 && *cv.Failed[0].Id == "v2" && *cv.Failed[0].Code == "ReceiptHandleIsInvalid", "ChangeMessageVisibilityBatch Failed: %v", cv.Failed)
	again := receive(sqs.ReceiveMessageInput{QueueUrl: &url})
	h.Eq(bodies(again), []string{"one"}, "released by the batch")
	del, err := c.DeleteMessageBatch(&sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: []*sqs.DeleteMessageBatchRequestEntry{
		{Id: sv("d1"), ReceiptHandle: again[0].ReceiptHandle}, {Id: sv("d2"), ReceiptHandle: handle["two"]}, {Id: sv("d3"), ReceiptHandle: sv("garbage")},
	}})
	h.Must(err, "DeleteMessageBatch")
	h.Eq(len(del.Successful), 2, "DeleteMessageBatch Successful")
	h.Check(len(del.Failed) == 1 && *del.Failed[0].Id == "d3" && *del.Failed[0].Code == "ReceiptHandleIsInvalid", "DeleteMessageBatch Failed: %v", del.Failed)
	_, err = c.SendMessageBatch(&sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []*sqs.SendMessageBatchRequestEntry{
		{Id: sv("same"), MessageBody: sv("a")}, {Id: sv("same"), MessageBody: sv("b")}}})
	expectCode(err, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "SendMessageBatch with repeated ids")
	return "send/delete/change-visibility batches with partial failures, MD5s, BatchEntryIdsNotDistinct ok"
}

func visibilityChangeRelease() any {
	url := create("vis", map[string]string{"VisibilityTimeout": "30"}, nil)
	_, err := c.SendMessage(&sqs.SendMessageInput{QueueUrl: &url, MessageBody: sv("v")})
	h.Must(err, "SendMessage")
	r1 := receive(sqs.ReceiveMessageInput{QueueUrl: &url})
	h.Eq(len(r1), 1, "first receive")
	h.Eq(len(receive(sqs.ReceiveMessageInput{QueueUrl: &url})), 0, "receive while in flight")
	_, err = c.ChangeMessageVisibility(&sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: r1[0].ReceiptHandle, VisibilityTimeout: iv(0)})
	h.Must(err, "ChangeMessageVisibility 0")
	r2 := receive(sqs.ReceiveMessageInput{QueueUrl: &url, VisibilityTimeout: iv(1)})
	h.Eq(len(r2), 1, "receive after release")
	h.Eq(len(receive(sqs.ReceiveMessageInput{QueueUrl: &url})), 0, "hidden by the 1 s receive override")
	time.Sleep(1300 * time.Millisecond)
	r3 := receive(sqs.ReceiveMessageInput{QueueUrl: &url})
	h.Eq(len(r3), 1, "visible again after the 1 s override")
	_, err = c.ChangeMessageVisibility(&sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: r3[0].ReceiptHandle, VisibilityTimeout: iv(1)})
	h.Must(err, "ChangeMessageVisibility 1")
	time.Sleep(1300 * time.Millisecond)
	r4 := receive(sqs.ReceiveMessageInput{QueueUrl: &url})
	h.Eq(len(r4), 1, "visible after the 1 s change")
	_, err = c.ChangeMessageVisibility(&sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: r4[0].ReceiptHandle, VisibilityTimeout: iv(30)})
	h.Must(err, "extend")
	h.Eq(len(receive(sqs.ReceiveMessageInput{QueueUrl: &url})), 0, "after extending")
	_, err = c.DeleteMessage(&sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: r4[0].ReceiptHandle})
	h.Must(err, "DeleteMessage")
	return "hidden in flight; released by 0; 1 s override and 1 s change expire; extend ok"
}

func delay() any {
	q1 := create("delay", nil, nil)
	q2 := create("qdelay", map[string]string{"DelaySeconds": "1"}, nil)
	_, err := c.SendMessage(&sqs.SendMessageInput{QueueUrl: &q1, MessageBody: sv("per-message"), DelaySeconds: iv(1)})
	h.Must(err, "SendMessage delayed")
	_, err = c.SendMessageBatch(&sqs.SendMessageBatchInput{QueueUrl: &q1, Entries: []*sqs.SendMessageBatchRequestEntry{
		{Id: sv("now"), MessageBody: sv("batch-now")}, {Id: sv("later"), MessageBody: sv("batch-later"), DelaySeconds: iv(1)}}})
	h.Must(err, "SendMessageBatch")
	_, err = c.SendMessage(&sqs.SendMessageInput{QueueUrl: &q2, MessageBody: sv("queue-delay")})
	h.Must(err, "SendMessage q2")
	t0 := time.Now()
	h.Eq(bodies(receive(sqs.ReceiveMessageInput{QueueUrl: &q1})), []string{"batch-now"}, "immediately visible on q1")
	h.Eq(len(receive(sqs.ReceiveMessageInput{QueueUrl: &q2})), 0, "immediately visible on the delay queue")
	h.Eq(attrs(q1, "ApproximateNumberOfMessagesDelayed")["ApproximateNumberOfMessagesDelayed"], "2", "ApproximateNumberOfMessagesDelayed")
	time.Sleep(1300*time.Millisecond - time.Since(t0))
	h.Eq(sorted(bodies(receiveN(q1, 2, 2*time.Second))), []string{"batch-later", "per-message"}, "q1 after 1.3 s")
	h.Eq(bodies(receiveN(q2, 1, 2*time.Second)), []string{"queue-delay"}, "delay queue after 1.3 s")
	return "per-message, per-entry and queue DelaySeconds hold messages back, then release them"
}

func longPolling() any {
	url := create("lp", nil, nil)
	t := time.Now()
	h.Eq(len(receive(sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: iv(1)})), 0, "empty long poll")
	empty := time.Since(t)
	h.Check(empty >= 900*time.Millisecond && empty < 3500*time.Millisecond, "empty 1 s long poll took %v", empty)
	t = time.Now()
	go func() {
		time.Sleep(500 * time.Millisecond)
		c.SendMessage(&sqs.SendMessageInput{QueueUrl: &url, MessageBody: sv("wake up")})
	}()
	got := receive(sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: iv(5)})
	woke := time.Since(t)
	h.Eq(bodies(got), []string{"wake up"}, "long poll result")
	h.Check(woke >= 400*time.Millisecond && woke < 2500*time.Millisecond, "woke after %v (send at 500 ms)", woke)
	c.DeleteMessage(&sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: got[0].ReceiptHandle})
	_, err := c.SetQueueAttributes(&sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: sm(map[string]string{"ReceiveMessageWaitTimeSeconds": "1"})})
	h.Must(err, "SetQueueAttributes")
	t = time.Now()
	h.Eq(len(receive(sqs.ReceiveMessageInput{QueueUrl: &url})), 0, "queue-default long poll")
	qd := time.Since(t)
	h.Check(qd >= 900*time.Millisecond && qd < 3500*time.Millisecond, "queue-default poll took %v", qd)
	return fmt.Sprintf("empty poll %v; woke after %v; queue-default wait %v", empty.Round(time.Millisecond), woke.Round(time.Millisecond), qd.Round(time.Millisecond))
}

func fifo() any {
	url := create("fifo", map[string]string{"FifoQueue": "true"}, nil)
	var seq []uint64
	for _, b := range []string{"a1", "a2", "a3"} {
		out, err := c.SendMessage(&sqs.SendMessageInput{QueueUrl: &url, MessageBody: sv(b), MessageGroupId: sv("g1"), MessageDeduplicationId: sv(b)})
		h.Must(err, "SendMessage "+b)
		n, err := strconv.ParseUint(aws.StringValue(out.SequenceNumber), 10, 64)
		h.Check(err == nil, "SequenceNumber %q", aws.StringValue(out.SequenceNumber))
		seq = append(seq, n)
	}
	h.Check(seq[0] < seq[1] && seq[1] < seq[2], "SequenceNumbers not increasing: %v", seq)
	_, err := c.SendMessage(&sqs.SendMessageInput{QueueUrl: &url, MessageBody: sv("a1"), MessageGroupId: sv("g1"), MessageDeduplicationId: sv("a1")})
	h.Must(err, "duplicate send")
	r1 := receive(sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: iv(1), AttributeNames: aws.StringSlice([]string{"All"})})
	h.Eq(bodies(r1), []string{"a1"}, "first FIFO receive")
	at := aws.StringValueMap(r1[0].Attributes)
	h.Eq([]string{at["MessageGroupId"], at["MessageDeduplicationId"], at["SequenceNumber"]}, []string{"g1", "a1", fmt.Sprint(seq[0])}, "FIFO system attributes")
	h.Eq(len(receive(sqs.ReceiveMessageInput{QueueUrl: &url})), 0, "receive while g1 is locked")
	_, err = c.SendMessage(&sqs.SendMessageInput{QueueUrl: &url, MessageBody: sv("b1"), MessageGroupId: sv("g2"), MessageDeduplicationId: sv("b1")})
	h.Must(err, "send b1")
	r2 := receive(sqs.ReceiveMessageInput{QueueUrl: &url})
	h.Eq(bodies(r2), []string{"b1"}, "only the unlocked group g2")
	for _, m := range append(r2, r1...) {
		c.DeleteMessage(&sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle})
	}
	drain := func(n int) []string {
		var out []string
		h.Within(3*time.Second, func() bool {
			for _, m := range receive(sqs.ReceiveMessageInput{QueueUrl: &url}) {
				out = append(out, *m.Body)
				c.DeleteMessage(&sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle})
			}
			return len(out) >= n
		})
		return out
	}
	h.Eq(drain(2), []string{"a2", "a3"}, "rest of g1 in order, duplicate dropped")
	_, err = c.SetQueueAttributes(&sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: sm(map[string]string{"ContentBasedDeduplication": "true"})})
	h.Must(err, "SetQueueAttributes ContentBasedDeduplication")
	for i := 0; i < 2; i++ {
		_, err = c.SendMessage(&sqs.SendMessageInput{QueueUrl: &url, MessageBody: sv("same"), MessageGroupId: sv("g3")})
		h.Must(err, "content-deduplicated send")
	}
	h.Eq(drain(1), []string{"same"}, "content-based deduplication")
	var entries []*sqs.SendMessageBatchRequestEntry
	for _, b := range []string{"c1", "c2", "c3", "c4"} {
		entries = append(entries, &sqs.SendMessageBatchRequestEntry{Id: sv(b), MessageBody: sv(b), MessageGroupId: sv("g4")})
	}
	bo, err := c.SendMessageBatch(&sqs.SendMessageBatchInput{QueueUrl: &url, Entries: entries})
	h.Must(err, "FIFO batch")
	h.Eq(len(bo.Successful), 4, "FIFO batch accepted")
	h.Eq(drain(4), []string{"c1", "c2", "c3", "c4"}, "FIFO batch order")
	return "sequence numbers, group lock, explicit and content-based dedup, batch order ok"
}

func deadLetter() any {
	dlq := create("dlq", nil, nil)
	dlqArn := attrs(dlq, "QueueArn")["QueueArn"]
	rp, _ := json.Marshal(map[string]any{"deadLetterTargetArn": dlqArn, "maxReceiveCount": 1})
	src := create("src", map[string]string{"RedrivePolicy": string(rp)}, nil)
	srcArn := attrs(src, "QueueArn")["QueueArn"]
	sent, err := c.SendMessage(&sqs.SendMessageInput{QueueUrl: &src, MessageBody: sv("poison")})
	h.Must(err, "SendMessage")
	h.Eq(bodies(receive(sqs.ReceiveMessageInput{QueueUrl: &src, VisibilityTimeout: iv(0)})), []string{"poison"}, "1st receive")
	h.Eq(len(receive(sqs.ReceiveMessageInput{QueueUrl: &src, VisibilityTimeout: iv(0)})), 0, "2nd receive (moved to the DLQ)")
	var dl []*sqs.Message
	h.Within(3*time.Second, func() bool {
		dl = receive(sqs.ReceiveMessageInput{QueueUrl: &dlq, VisibilityTimeout: iv(0), AttributeNames: aws.StringSlice([]string{"All"})})
		return len(dl) > 0
	})
	h.Eq(len(dl), 1, "messages in the DLQ")
	h.Eq(*dl[0].MessageId, *sent.MessageId, "DLQ message id")
	h.Eq(aws.StringValue(dl[0].Attributes["DeadLetterQueueSourceArn"]), srcArn, "DeadLetterQueueSourceArn")
	srcs, err := c.ListDeadLetterSourceQueues(&sqs.ListDeadLetterSourceQueuesInput{QueueUrl: &dlq})
	h.Must(err, "ListDeadLetterSourceQueues")
	h.Eq(aws.StringValueSlice(srcs.QueueUrls), []string{src}, "ListDeadLetterSourceQueues")
	st, err := c.StartMessageMoveTask(&sqs.StartMessageMoveTaskInput{SourceArn: &dlqArn})
	h.Must(err, "StartMessageMoveTask")
	h.Check(aws.StringValue(st.TaskHandle) != "", "no TaskHandle")
	var task *sqs.ListMessageMoveTasksResultEntry
	done := h.Within(5*time.Second, func() bool {
		l, err := c.ListMessageMoveTasks(&sqs.ListMessageMoveTasksInput{SourceArn: &dlqArn})
		h.Must(err, "ListMessageMoveTasks")
		if len(l.Results) > 0 {
			task = l.Results[0]
		}
		return task != nil && aws.StringValue(task.Status) == "COMPLETED"
	})
	h.Check(done, "move task not COMPLETED: %v", task)
	h.Eq(aws.Int64Value(task.ApproximateNumberOfMessagesMoved), int64(1), "ApproximateNumberOfMessagesMoved")
	back := receiveN(src, 1, 3*time.Second)
	h.Eq(bodies(back), []string{"poison"}, "message back in the source queue")
	h.Eq(attrs(dlq, "ApproximateNumberOfMessages")["ApproximateNumberOfMessages"], "0", "DLQ empty after the move")
	return "moved to the DLQ on the 2nd receive; ListDeadLetterSourceQueues; move task COMPLETED, message redriven"
}

func tags() any {
	url := create("tags", nil, map[string]string{"env": "test", "team": "a"})
	list := func() map[string]string {
		out, err := c.ListQueueTags(&sqs.ListQueueTagsInput{QueueUrl: &url})
		h.Must(err, "ListQueueTags")
		return aws.StringValueMap(out.Tags)
	}
	h.Eq(list(), map[string]string{"env": "test", "team": "a"}, "tags from CreateQueue")
	_, err := c.TagQueue(&sqs.TagQueueInput{QueueUrl: &url, Tags: sm(map[string]string{"team": "b", "cost-center": "42"})})
	h.Must(err, "TagQueue")
	h.Eq(list(), map[string]string{"cost-center": "42", "env": "test", "team": "b"}, "after TagQueue")
	_, err = c.UntagQueue(&sqs.UntagQueueInput{QueueUrl: &url, TagKeys: aws.StringSlice([]string{"env", "absent"})})
	h.Must(err, "UntagQueue")
	h.Eq(list(), map[string]string{"cost-center": "42", "team": "b"}, "after UntagQueue")
	return "create with tags, tag (overwrite), untag (absent key too) ok"
}

func errorsTyped() any {
	url := create("err", nil, nil)
	missing := h.Name("missing")
	missingURL := url[:strings.LastIndex(url, "/")+1] + missing
	var seen []string
	note := func(what, code string) { seen = append(seen, what+" -> "+code) }
	_, err := c.GetQueueUrl(&sqs.GetQueueUrlInput{QueueName: &missing})
	note("GetQueueUrl missing", expectCode(err, "AWS.SimpleQueueService.NonExistentQueue", "GetQueueUrl missing"))
	_, err = c.SendMessage(&sqs.SendMessageInput{QueueUrl: &missingURL, MessageBody: sv("x")})
	note("SendMessage missing", expectCode(err, "AWS.SimpleQueueService.NonExistentQueue", "SendMessage to a missing queue"))
	_, err = c.DeleteMessage(&sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: sv("garbage")})
	note("DeleteMessage garbage", expectCode(err, "ReceiptHandleIsInvalid", "DeleteMessage bad handle"))
	_, err = c.SendMessageBatch(&sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []*sqs.SendMessageBatchRequestEntry{}})
	note("SendMessageBatch empty", expectCode(err, "AWS.SimpleQueueService.EmptyBatchRequest", "SendMessageBatch empty"))
	_, err = c.GetQueueAttributes(&sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: aws.StringSlice([]string{"Foobar"})})
	note("GetQueueAttributes Foobar", expectCode(err, "InvalidAttributeName", "GetQueueAttributes unknown"))
	_, err = c.ReceiveMessage(&sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: iv(11)})
	note("ReceiveMessage MaxNumberOfMessages=11", expectCode(err, "InvalidParameterValue", "MaxNumberOfMessages=11"))
	return strings.Join(seen, "; ")
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: sdkv1 <endpoint> <results.json>")
		os.Exit(2)
	}
	endpoint = strings.TrimRight(os.Args[1], "/")
	sess := session.Must(session.NewSession(&aws.Config{
		Region:      sv("us-east-1"),
		Endpoint:    sv(endpoint),
		Credentials: credentials.NewStaticCredentials("AKIAIOSFODNN7EXAMPLE", "secret", ""),
		MaxRetries:  aws.Int(0),
	}))
	c = sqs.New(sess)
	protocol := "query"
	if c.Client.ClientInfo.JSONVersion != "" {
		protocol = "json"
	}
	funcs := map[string]func() any{
		"queue_lifecycle": queueLifecycle, "list_queues_pagination": listQueuesPagination,
		"send_receive_delete_attributes": sendReceiveDeleteAttributes, "batches_partial_failure": batchesPartialFailure,
		"visibility_change_release": visibilityChangeRelease, "delay": delay, "long_polling": longPolling,
		"fifo_order_group_lock_dedup": fifo, "dead_letter_and_move_task": deadLetter, "tags": tags, "errors_typed": errorsTyped,
	}
	cleanup := func() {
		for _, u := range created {
			u := u
			c.DeleteQueue(&sqs.DeleteQueueInput{QueueUrl: &u})
		}
		created = nil
	}
	os.Exit(h.Run("aws-sdk-go (v1)", "v"+aws.SDKVersion, protocol,
		map[string]any{"go": runtime.Version(), "client_protocol": protocol}, os.Args[2], funcs, cleanup))
}
