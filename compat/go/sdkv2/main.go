// The AWS SDK for Go v2 (service/sqs, AWS JSON 1.0) against a fresh retsu.
//
//	go run . <endpoint> <results.json> [<sns-results.json>]
//
// With the third argument the SNS scenarios (sns.go) follow, on the same
// server, into that file.
//
// The SDK validates MD5OfMessageBody on send and receive itself (its
// checksum middleware stays on); the scenarios check the attribute MD5s
// byte-exactly with compat/go/harness.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	h "retsu.dev/compat/harness"
)

var (
	ctx      = context.Background()
	c        *sqs.Client
	endpoint string
	created  []string
)

func create(stem string, attrs map[string]string, tags map[string]string) string {
	name := h.Name(stem)
	if attrs["FifoQueue"] == "true" {
		name += ".fifo"
	}
	out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &name, Attributes: attrs, Tags: tags})
	h.Must(err, "CreateQueue "+name)
	created = append(created, *out.QueueUrl)
	return *out.QueueUrl
}

func attrs(url string, names ...string) map[string]string {
	qa := make([]types.QueueAttributeName, len(names))
	for i, n := range names {
		qa[i] = types.QueueAttributeName(n)
	}
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: qa})
	h.Must(err, "GetQueueAttributes")
	return out.Attributes
}

func receive(in sqs.ReceiveMessageInput) []types.Message {
	if in.MaxNumberOfMessages == 0 {
		in.MaxNumberOfMessages = 10
	}
	out, err := c.ReceiveMessage(ctx, &in)
	h.Must(err, "ReceiveMessage")
	return out.Messages
}

func receiveN(url string, n int, d time.Duration) []types.Message {
	var got []types.Message
	h.Within(d, func() bool {
		got = append(got, receive(sqs.ReceiveMessageInput{QueueUrl: &url})...)
		return len(got) >= n
	})
	return got
}

func bodies(ms []types.Message) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, *m.Body)
	}
	return out
}

func sorted(s []string) []string { sort.Strings(s); return s }

// expectErr checks err is the modelled type T; returns the wire code seen.
func expectErr[T error](err error, what string) string {
	h.Check(err != nil, "%s: expected an error, the call succeeded", what)
	var typed T
	if !errors.As(err, &typed) {
		h.Fail("%s: expected %T, got %T: %v", what, typed, err, err)
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return "?"
}

func apiCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return fmt.Sprintf("non-API error %v", err)
}

func sv(s string) *string { return &s }

// ------------------------------------------------------------------ scenarios

func queueLifecycle() any {
	url := create("life", map[string]string{"VisibilityTimeout": "5"}, nil)
	name := url[strings.LastIndex(url, "/")+1:]
	h.Check(strings.HasPrefix(url, endpoint+"/"), "QueueUrl %s does not lead back to %s", url, endpoint)
	got, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: &name})
	h.Must(err, "GetQueueUrl")
	h.Eq(*got.QueueUrl, url, "GetQueueUrl")
	all := attrs(url, "All")
	h.Eq(all["VisibilityTimeout"], "5", "VisibilityTimeout")
	h.Eq(all["MaximumMessageSize"], "1048576", "MaximumMessageSize")
	h.Eq(all["MessageRetentionPeriod"], "345600", "MessageRetentionPeriod")
	h.Check(strings.HasPrefix(all["QueueArn"], "arn:aws:sqs:") && strings.HasSuffix(all["QueueArn"], ":"+name), "QueueArn %q", all["QueueArn"])
	_, isFifo := all["FifoQueue"]
	h.Check(!isFifo, "standard queue lists FifoQueue")
	h.Eq(attrs(url, "DelaySeconds"), map[string]string{"DelaySeconds": "0"}, "GetQueueAttributes([DelaySeconds])")
	again, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &name, Attributes: map[string]string{"VisibilityTimeout": "5"}})
	h.Must(err, "CreateQueue again, same attributes")
	h.Eq(*again.QueueUrl, url, "CreateQueue again")
	_, err = c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &name, Attributes: map[string]string{"VisibilityTimeout": "6"}})
	expectErr[*types.QueueNameExists](err, "CreateQueue with a different attribute")
	_, err = c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: map[string]string{"VisibilityTimeout": "7"}})
	h.Must(err, "SetQueueAttributes")
	h.Eq(attrs(url, "VisibilityTimeout")["VisibilityTimeout"], "7", "VisibilityTimeout after set")
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: sv("to be purged")})
	h.Must(err, "SendMessage")
	h.Eq(attrs(url, "ApproximateNumberOfMessages")["ApproximateNumberOfMessages"], "1", "count before purge")
	_, err = c.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: &url})
	h.Must(err, "PurgeQueue")
	h.Eq(attrs(url, "ApproximateNumberOfMessages")["ApproximateNumberOfMessages"], "0", "count after purge")
	_, err = c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &url})
	h.Must(err, "DeleteQueue")
	_, err = c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: &name})
	code := expectErr[*types.QueueDoesNotExist](err, "GetQueueUrl after DeleteQueue")
	furl := create("life", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}, nil)
	fa := attrs(furl, "All")
	h.Eq([]string{fa["FifoQueue"], fa["ContentBasedDeduplication"]}, []string{"true", "true"}, "FIFO attributes")
	return "create/get-url/attributes/idempotent create/QueueNameExists/purge/delete ok; missing queue code " + code
}

func listQueuesPagination() any {
	prefix := h.Name("lqp") + "-"
	var made []string
	for i := 0; i < 5; i++ {
		out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: sv(fmt.Sprintf("%s%d", prefix, i))})
		h.Must(err, "CreateQueue")
		created = append(created, *out.QueueUrl)
		made = append(made, *out.QueueUrl)
	}
	create("other", nil, nil)
	sort.Strings(made)
	whole, err := c.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: &prefix})
	h.Must(err, "ListQueues")
	h.Eq(sorted(whole.QueueUrls), made, "ListQueues(prefix)")
	h.Check(whole.NextToken == nil, "NextToken without MaxResults")
	var seen []string
	pages := 0
	var token *string
	for {
		out, err := c.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: &prefix, MaxResults: aws.Int32(2), NextToken: token})
		h.Must(err, "ListQueues page")
		pages++
		h.Check(len(out.QueueUrls) <= 2, "page of %d with MaxResults 2", len(out.QueueUrls))
		seen = append(seen, out.QueueUrls...)
		token = out.NextToken
		if token == nil || pages > 5 {
			break
		}
	}
	h.Eq(sorted(seen), made, "union of pages")
	h.Eq(pages, 3, "pages for 5 queues at MaxResults 2")
	var viaPaginator []string
	p := sqs.NewListQueuesPaginator(c, &sqs.ListQueuesInput{QueueNamePrefix: &prefix, MaxResults: aws.Int32(2)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		h.Must(err, "ListQueuesPaginator")
		viaPaginator = append(viaPaginator, page.QueueUrls...)
	}
	h.Eq(sorted(viaPaginator), made, "ListQueuesPaginator")
	none, err := c.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: sv(prefix + "zzz")})
	h.Must(err, "ListQueues no match")
	h.Eq(len(none.QueueUrls), 0, "ListQueues with no match")
	return "prefix filter, 3 pages of MaxResults 2, ListQueuesPaginator, empty match ok"
}

func sendReceiveDeleteAttributes() any {
	url := create("srd", nil, nil)
	body := "héllo <wörld> & \"quotes\" ✓ 😀 \r\n\ttab ]]>"
	s, n, ct := "hello ✓", "12.5", `{"k":1}`
	bin := []byte{0, 1, 2, 254, 255}
	mattrs := map[string]types.MessageAttributeValue{
		"s":      {DataType: sv("String"), StringValue: &s},
		"n":      {DataType: sv("Number"), StringValue: &n},
		"b":      {DataType: sv("Binary"), BinaryValue: bin},
		"custom": {DataType: sv("String.json"), StringValue: &ct},
	}
	want := map[string]h.Attr{"s": {"String", &s, nil}, "n": {"Number", &n, nil}, "b": {"Binary", nil, bin}, "custom": {"String.json", &ct, nil}}
	sent, err := c.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl: &url, MessageBody: &body, MessageAttributes: mattrs,
		MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{
			"AWSTraceHeader": {DataType: sv("String"), StringValue: sv(h.Trace)}},
	})
	h.Must(err, "SendMessage")
	h.Eq(*sent.MD5OfMessageBody, h.MD5Hex(body), "MD5OfMessageBody")
	h.Eq(*sent.MD5OfMessageAttributes, h.MD5OfAttributes(want), "MD5OfMessageAttributes")
	h.Eq(aws.ToString(sent.MD5OfMessageSystemAttributes), h.TraceMD5, "MD5OfMessageSystemAttributes")
	h.Check(sent.SequenceNumber == nil, "standard queue returned a SequenceNumber")
	plain, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: sv("plain")})
	h.Must(err, "SendMessage plain")
	h.Check(plain.MD5OfMessageAttributes == nil, "MD5OfMessageAttributes without attributes")

	msgs := receive(sqs.ReceiveMessageInput{QueueUrl: &url, MessageAttributeNames: []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}, VisibilityTimeout: 30})
	h.Eq(len(msgs), 2, "messages received")
	var m, p types.Message
	for _, x := range msgs {
		if *x.MessageId == *sent.MessageId {
			m = x
		} else {
			p = x
		}
	}
	h.Check(m.MessageId != nil && p.MessageId != nil, "sent messages not both received")
	h.Eq(len(p.MessageAttributes), 0, "attributes of the plain message")
	h.Eq(*m.Body, body, "Body round trip")
	h.Eq(*m.MD5OfBody, h.MD5Hex(body), "MD5OfBody")
	h.Eq(len(m.MessageAttributes), 4, "received attribute count")
	for k, v := range mattrs {
		g := m.MessageAttributes[k]
		h.Eq(aws.ToString(g.DataType), *v.DataType, "DataType of "+k)
		h.Eq(aws.ToString(g.StringValue), aws.ToString(v.StringValue), "StringValue of "+k)
		h.Eq(fmt.Sprint(g.BinaryValue), fmt.Sprint(v.BinaryValue), "BinaryValue of "+k)
	}
	h.Eq(aws.ToString(m.MD5OfMessageAttributes), h.MD5OfAttributes(want), "received MD5OfMessageAttributes")
	sa := m.Attributes
	h.Eq(sa["AWSTraceHeader"], h.Trace, "AWSTraceHeader")
	h.Eq(sa["ApproximateReceiveCount"], "1", "ApproximateReceiveCount")
	ts, _ := strconv.ParseInt(sa["SentTimestamp"], 10, 64)
	h.Check(len(sa["SentTimestamp"]) == 13 && time.Since(time.UnixMilli(ts)).Abs() < time.Minute, "SentTimestamp %q", sa["SentTimestamp"])
	h.Check(sa["SenderId"] != "" && sa["ApproximateFirstReceiveTimestamp"] != "", "SenderId/ApproximateFirstReceiveTimestamp missing: %v", sa)

	// Filtered attribute names (an exact name and a prefix) and a new receipt handle.
	_, err = c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
	h.Must(err, "ChangeMessageVisibility 0")
	again := receive(sqs.ReceiveMessageInput{QueueUrl: &url, MessageAttributeNames: []string{"s", "cu.*"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{"ApproximateReceiveCount"}})
	h.Eq(len(again), 1, "receive after release")
	a := again[0]
	h.Check(*a.ReceiptHandle != *m.ReceiptHandle, "a receive must issue a new receipt handle")
	h.Eq(len(a.MessageAttributes), 2, "filtered attributes (s, cu.*)")
	h.Eq(aws.ToString(a.MD5OfMessageAttributes), h.MD5OfAttributes(map[string]h.Attr{"s": want["s"], "custom": want["custom"]}), "MD5 of the filtered attributes")
	h.Eq(a.Attributes, map[string]string{"ApproximateReceiveCount": "2"}, "selected system attributes")
	for _, x := range []*string{a.ReceiptHandle, p.ReceiptHandle, a.ReceiptHandle} { // repeat delete succeeds
		_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: x})
		h.Must(err, "DeleteMessage")
	}
	counts := attrs(url, "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible")
	h.Eq([]string{counts["ApproximateNumberOfMessages"], counts["ApproximateNumberOfMessagesNotVisible"]}, []string{"0", "0"}, "counts after delete")
	return "String/Number/Binary/custom attributes, AWSTraceHeader, MD5s (body, attributes, filtered, system), SDK MD5 validation on"
}

func batchesPartialFailure() any {
	url := create("batch", map[string]string{"MaximumMessageSize": "1024"}, nil)
	out, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{
		{Id: sv("ok1"), MessageBody: sv("one")},
		{Id: sv("ok2"), MessageBody: sv("two"), MessageAttributes: map[string]types.MessageAttributeValue{"k": {DataType: sv("String"), StringValue: sv("x")}}},
		{Id: sv("big"), MessageBody: sv(strings.Repeat("x", 2000))},
		{Id: sv("bad"), MessageBody: sv("bad \x00 char")},
	}})
	h.Must(err, "SendMessageBatch")
	ok := map[string]types.SendMessageBatchResultEntry{}
	for _, e := range out.Successful {
		ok[*e.Id] = e
	}
	failed := map[string]types.BatchResultErrorEntry{}
	for _, e := range out.Failed {
		failed[*e.Id] = e
	}
	h.Eq(len(ok), 2, "Successful entries")
	h.Eq(*ok["ok1"].MD5OfMessageBody, h.MD5Hex("one"), "ok1 MD5OfMessageBody")
	h.Eq(aws.ToString(ok["ok2"].MD5OfMessageAttributes), "a45daa70926828a2f0a1db3418e6feb4", "ok2 MD5OfMessageAttributes")
	h.Eq([]any{aws.ToString(failed["big"].Code), failed["big"].SenderFault}, []any{"InvalidParameterValue", true}, "oversize entry")
	h.Eq([]any{aws.ToString(failed["bad"].Code), failed["bad"].SenderFault}, []any{"InvalidMessageContents", true}, "invalid character entry")
	got := receiveN(url, 2, 3*time.Second)
	h.Eq(sorted(bodies(got)), []string{"one", "two"}, "received bodies")
	handle := map[string]*string{}
	for _, m := range got {
		handle[*m.Body] = m.ReceiptHandle
	}
	cv, err := c.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &url, Entries: []types.ChangeMessageVisibilityBatchRequestEntry{
		{Id: sv("v1"), ReceiptHandle: handle["one"], VisibilityTimeout: 0},
		{Id: sv("v2"), ReceiptHandle: sv("garbage"), VisibilityTimeout: 0},
	}})
	h.Must(err, "ChangeMessageVisibilityBatch")
	h.Eq(len(cv.Successful), 1, "ChangeMessageVisibilityBatch Successful")
	h.Check(len(cv.Failed) == 1 && *cv.Failed[0].Id == "v2" && *cv.Failed[0].Code == "ReceiptHandleIsInvalid", "ChangeMessageVisibilityBatch Failed: %+v", cv.Failed)
	again := receive(sqs.ReceiveMessageInput{QueueUrl: &url})
	h.Eq(bodies(again), []string{"one"}, "released by the batch")
	del, err := c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: []types.DeleteMessageBatchRequestEntry{
		{Id: sv("d1"), ReceiptHandle: again[0].ReceiptHandle}, {Id: sv("d2"), ReceiptHandle: handle["two"]}, {Id: sv("d3"), ReceiptHandle: sv("garbage")},
	}})
	h.Must(err, "DeleteMessageBatch")
	h.Eq(len(del.Successful), 2, "DeleteMessageBatch Successful")
	h.Check(len(del.Failed) == 1 && *del.Failed[0].Id == "d3" && *del.Failed[0].Code == "ReceiptHandleIsInvalid", "DeleteMessageBatch Failed: %+v", del.Failed)
	_, err = c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{
		{Id: sv("same"), MessageBody: sv("a")}, {Id: sv("same"), MessageBody: sv("b")}}})
	expectErr[*types.BatchEntryIdsNotDistinct](err, "SendMessageBatch with repeated ids")
	return "send/delete/change-visibility batches with partial failures, MD5s, BatchEntryIdsNotDistinct ok"
}

func visibilityChangeRelease() any {
	url := create("vis", map[string]string{"VisibilityTimeout": "30"}, nil)
	_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: sv("v")})
	h.Must(err, "SendMessage")
	r1 := receive(sqs.ReceiveMessageInput{QueueUrl: &url})
	h.Eq(len(r1), 1, "first receive")
	h.Eq(len(receive(sqs.ReceiveMessageInput{QueueUrl: &url})), 0, "receive while in flight")
	_, err = c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: r1[0].ReceiptHandle, VisibilityTimeout: 0})
	h.Must(err, "ChangeMessageVisibility 0")
	r2 := receive(sqs.ReceiveMessageInput{QueueUrl: &url, VisibilityTimeout: 1})
	h.Eq(len(r2), 1, "receive after release")
	h.Eq(len(receive(sqs.ReceiveMessageInput{QueueUrl: &url})), 0, "hidden by the 1 s receive override")
	time.Sleep(1300 * time.Millisecond)
	r3 := receive(sqs.ReceiveMessageInput{QueueUrl: &url})
	h.Eq(len(r3), 1, "visible again after the 1 s override")
	_, err = c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: r3[0].ReceiptHandle, VisibilityTimeout: 1})
	h.Must(err, "ChangeMessageVisibility 1")
	time.Sleep(1300 * time.Millisecond)
	r4 := receive(sqs.ReceiveMessageInput{QueueUrl: &url})
	h.Eq(len(r4), 1, "visible after the 1 s change")
	_, err = c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: r4[0].ReceiptHandle, VisibilityTimeout: 30})
	h.Must(err, "extend")
	h.Eq(len(receive(sqs.ReceiveMessageInput{QueueUrl: &url})), 0, "after extending")
	_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: r4[0].ReceiptHandle})
	h.Must(err, "DeleteMessage")
	return "hidden in flight; released by 0; 1 s override and 1 s change expire; extend ok"
}

func delay() any {
	q1 := create("delay", nil, nil)
	q2 := create("qdelay", map[string]string{"DelaySeconds": "1"}, nil)
	_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q1, MessageBody: sv("per-message"), DelaySeconds: 1})
	h.Must(err, "SendMessage delayed")
	_, err = c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &q1, Entries: []types.SendMessageBatchRequestEntry{
		{Id: sv("now"), MessageBody: sv("batch-now")}, {Id: sv("later"), MessageBody: sv("batch-later"), DelaySeconds: 1}}})
	h.Must(err, "SendMessageBatch")
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q2, MessageBody: sv("queue-delay")})
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
	h.Eq(len(receive(sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 1})), 0, "empty long poll")
	empty := time.Since(t)
	h.Check(empty >= 900*time.Millisecond && empty < 3500*time.Millisecond, "empty 1 s long poll took %v", empty)
	t = time.Now()
	go func() {
		time.Sleep(500 * time.Millisecond)
		c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: sv("wake up")})
	}()
	got := receive(sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 5})
	woke := time.Since(t)
	h.Eq(bodies(got), []string{"wake up"}, "long poll result")
	h.Check(woke >= 400*time.Millisecond && woke < 2500*time.Millisecond, "woke after %v (send at 500 ms)", woke)
	_, err := c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: map[string]string{"ReceiveMessageWaitTimeSeconds": "1"}})
	h.Must(err, "SetQueueAttributes")
	c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: got[0].ReceiptHandle})
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
		out, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: sv(b), MessageGroupId: sv("g1"), MessageDeduplicationId: sv(b)})
		h.Must(err, "SendMessage "+b)
		n, err := strconv.ParseUint(aws.ToString(out.SequenceNumber), 10, 64)
		h.Check(err == nil, "SequenceNumber %q", aws.ToString(out.SequenceNumber))
		seq = append(seq, n)
	}
	h.Check(seq[0] < seq[1] && seq[1] < seq[2], "SequenceNumbers not increasing: %v", seq)
	_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: sv("a1"), MessageGroupId: sv("g1"), MessageDeduplicationId: sv("a1")})
	h.Must(err, "duplicate send")
	r1 := receive(sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 1, MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
	h.Eq(bodies(r1), []string{"a1"}, "first FIFO receive")
	at := r1[0].Attributes
	h.Eq([]string{at["MessageGroupId"], at["MessageDeduplicationId"], at["SequenceNumber"]}, []string{"g1", "a1", fmt.Sprint(seq[0])}, "FIFO system attributes")
	h.Eq(len(receive(sqs.ReceiveMessageInput{QueueUrl: &url})), 0, "receive while g1 is locked")
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: sv("b1"), MessageGroupId: sv("g2"), MessageDeduplicationId: sv("b1")})
	h.Must(err, "send b1")
	r2 := receive(sqs.ReceiveMessageInput{QueueUrl: &url})
	h.Eq(bodies(r2), []string{"b1"}, "only the unlocked group g2")
	for _, m := range append(r2, r1...) {
		c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle})
	}
	drain := func(n int) []string {
		var out []string
		h.Within(3*time.Second, func() bool {
			for _, m := range receive(sqs.ReceiveMessageInput{QueueUrl: &url}) {
				out = append(out, *m.Body)
				c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle})
			}
			return len(out) >= n
		})
		return out
	}
	h.Eq(drain(2), []string{"a2", "a3"}, "rest of g1 in order, duplicate dropped")
	_, err = c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: map[string]string{"ContentBasedDeduplication": "true"}})
	h.Must(err, "SetQueueAttributes ContentBasedDeduplication")
	for i := 0; i < 2; i++ {
		_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: sv("same"), MessageGroupId: sv("g3")})
		h.Must(err, "content-deduplicated send")
	}
	h.Eq(drain(1), []string{"same"}, "content-based deduplication")
	var entries []types.SendMessageBatchRequestEntry
	for _, b := range []string{"c1", "c2", "c3", "c4"} {
		entries = append(entries, types.SendMessageBatchRequestEntry{Id: sv(b), MessageBody: sv(b), MessageGroupId: sv("g4")})
	}
	bo, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: entries})
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
	sent, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &src, MessageBody: sv("poison")})
	h.Must(err, "SendMessage")
	// VisibilityTimeout 0 on ReceiveMessage is the int32 zero value, which
	// this SDK does not send; release the message explicitly instead.
	first := receive(sqs.ReceiveMessageInput{QueueUrl: &src})
	h.Eq(bodies(first), []string{"poison"}, "1st receive")
	_, err = c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &src, ReceiptHandle: first[0].ReceiptHandle, VisibilityTimeout: 0})
	h.Must(err, "ChangeMessageVisibility 0")
	h.Eq(len(receive(sqs.ReceiveMessageInput{QueueUrl: &src})), 0, "2nd receive (moved to the DLQ)")
	var dl []types.Message
	h.Within(3*time.Second, func() bool {
		dl = receive(sqs.ReceiveMessageInput{QueueUrl: &dlq, MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
		return len(dl) > 0
	})
	h.Eq(len(dl), 1, "messages in the DLQ")
	h.Eq(*dl[0].MessageId, *sent.MessageId, "DLQ message id")
	h.Eq(dl[0].Attributes["DeadLetterQueueSourceArn"], srcArn, "DeadLetterQueueSourceArn")
	_, err = c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &dlq, ReceiptHandle: dl[0].ReceiptHandle, VisibilityTimeout: 0})
	h.Must(err, "ChangeMessageVisibility 0 in the DLQ")
	srcs, err := c.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: &dlq})
	h.Must(err, "ListDeadLetterSourceQueues")
	h.Eq(srcs.QueueUrls, []string{src}, "ListDeadLetterSourceQueues")
	st, err := c.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: &dlqArn})
	h.Must(err, "StartMessageMoveTask")
	h.Check(aws.ToString(st.TaskHandle) != "", "no TaskHandle")
	var task types.ListMessageMoveTasksResultEntry
	done := h.Within(5*time.Second, func() bool {
		l, err := c.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: &dlqArn})
		h.Must(err, "ListMessageMoveTasks")
		if len(l.Results) > 0 {
			task = l.Results[0]
		}
		return aws.ToString(task.Status) == "COMPLETED"
	})
	h.Check(done, "move task not COMPLETED: %+v", task)
	h.Eq(task.ApproximateNumberOfMessagesMoved, int64(1), "ApproximateNumberOfMessagesMoved")
	back := receiveN(src, 1, 3*time.Second)
	h.Eq(bodies(back), []string{"poison"}, "message back in the source queue")
	h.Eq(attrs(dlq, "ApproximateNumberOfMessages")["ApproximateNumberOfMessages"], "0", "DLQ empty after the move")
	return "moved to the DLQ on the 2nd receive; ListDeadLetterSourceQueues; move task COMPLETED, message redriven"
}

func tags() any {
	url := create("tags", nil, map[string]string{"env": "test", "team": "a"})
	list := func() map[string]string {
		out, err := c.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: &url})
		h.Must(err, "ListQueueTags")
		return out.Tags
	}
	h.Eq(list(), map[string]string{"env": "test", "team": "a"}, "tags from CreateQueue")
	_, err := c.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: &url, Tags: map[string]string{"team": "b", "cost-center": "42"}})
	h.Must(err, "TagQueue")
	h.Eq(list(), map[string]string{"cost-center": "42", "env": "test", "team": "b"}, "after TagQueue")
	_, err = c.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: &url, TagKeys: []string{"env", "absent"}})
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
	_, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: &missing})
	note("GetQueueUrl missing", expectErr[*types.QueueDoesNotExist](err, "GetQueueUrl missing"))
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &missingURL, MessageBody: sv("x")})
	note("SendMessage missing", expectErr[*types.QueueDoesNotExist](err, "SendMessage to a missing queue"))
	_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: sv("garbage")})
	note("DeleteMessage garbage", expectErr[*types.ReceiptHandleIsInvalid](err, "DeleteMessage bad handle"))
	_, err = c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{}})
	note("SendMessageBatch empty", expectErr[*types.EmptyBatchRequest](err, "SendMessageBatch empty"))
	_, err = c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: []types.DeleteMessageBatchRequestEntry{}})
	note("DeleteMessageBatch empty", expectErr[*types.EmptyBatchRequest](err, "DeleteMessageBatch empty"))
	_, err = c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []types.QueueAttributeName{"Foobar"}})
	note("GetQueueAttributes Foobar", expectErr[*types.InvalidAttributeName](err, "GetQueueAttributes unknown"))
	_, err = c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 11})
	h.Check(err != nil, "MaxNumberOfMessages=11 accepted")
	note("ReceiveMessage MaxNumberOfMessages=11", apiCode(err))
	h.Check(strings.Contains(apiCode(err), "InvalidParameterValue"), "MaxNumberOfMessages=11: %v", err)
	return strings.Join(seen, "; ")
}

// closedConnRetryer tries a request once more only when Go's HTTP transport
// closed the connection under the SDK while it read an answer
// (aws/aws-sdk-go-v2#2737: a race in the standard library's connection
// loops, which the SDK's default retryer retries too). Every answer the
// server gave, error or throttle, is seen as it came: nothing else is
// retried.
func closedConnRetryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = 2
		o.Retryables = []retry.IsErrorRetryable{retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
			if errors.Is(err, net.ErrClosed) {
				return aws.TrueTernary
			}
			return aws.FalseTernary
		})}
		o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
	})
}

func main() {
	if len(os.Args) != 3 && len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: sdkv2 <endpoint> <results.json> [<sns-results.json>]")
		os.Exit(2)
	}
	endpoint = strings.TrimRight(os.Args[1], "/")
	c = sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIAIOSFODNN7EXAMPLE", "secret", ""),
		Retryer:      closedConnRetryer(),
	})
	version := depVersion("github.com/aws/aws-sdk-go-v2/service/sqs")
	funcs := map[string]func() any{
		"queue_lifecycle": queueLifecycle, "list_queues_pagination": listQueuesPagination,
		"send_receive_delete_attributes": sendReceiveDeleteAttributes, "batches_partial_failure": batchesPartialFailure,
		"visibility_change_release": visibilityChangeRelease, "delay": delay, "long_polling": longPolling,
		"fifo_order_group_lock_dedup": fifo, "dead_letter_and_move_task": deadLetter, "tags": tags, "errors_typed": errorsTyped,
	}
	cleanup := func() {
		for _, u := range created {
			u := u
			c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &u})
		}
		created = nil
	}
	rc := h.Run("aws-sdk-go-v2 service/sqs", version, "json", map[string]any{"go": strings.TrimPrefix(runtimeVersion(), "go")}, os.Args[2], funcs, cleanup)
	if len(os.Args) == 4 {
		if r := runSns(os.Args[3]); r > rc {
			rc = r
		}
	}
	os.Exit(rc)
}

// depVersion is the version of module path this binary was built with.
func depVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "?"
}

func runtimeVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.GoVersion
	}
	return "?"
}
