package example

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/retsu-dev/retsu/sdk/go/retsutest"
)

// client is an aws-sdk-go-v2 SQS client for srv.
func client(t testing.TB, srv *retsutest.Server) *sqs.Client {
	t.Helper()
	return clientFor(t, srv.Endpoint, srv.Region)
}

func clientFor(t testing.TB, endpoint, region string) *sqs.Client {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(),
		config.WithRegion(region),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")),
	)
	if err != nil {
		t.Fatal(err)
	}
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(endpoint) })
}

func createQueue(t testing.TB, c *sqs.Client, name string, attrs map[string]string) string {
	t.Helper()
	out, err := c.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		t.Fatalf("CreateQueue %s: %v", name, err)
	}
	return aws.ToString(out.QueueUrl)
}

func send(t testing.TB, c *sqs.Client, queueURL, body string) string {
	t.Helper()
	out, err := c.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(body)})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	return aws.ToString(out.MessageId)
}

// receive asks for up to max messages without waiting, with their receive count.
func receive(t testing.TB, c *sqs.Client, queueURL string, max int32) []types.Message {
	t.Helper()
	out, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(queueURL),
		MaxNumberOfMessages:         max,
		WaitTimeSeconds:             0,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount},
	})
	if err != nil {
		t.Fatalf("ReceiveMessage: %v", err)
	}
	return out.Messages
}

func receiveCount(t testing.TB, m types.Message) int {
	t.Helper()
	n, err := strconv.Atoi(m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)])
	if err != nil {
		t.Fatalf("ApproximateReceiveCount of %s: %v", aws.ToString(m.MessageId), err)
	}
	return n
}

func TestSendAndReceive(t *testing.T) {
	srv := retsutest.Start(t)
	c := client(t, srv)
	url := createQueue(t, c, "orders", nil)
	if url != srv.QueueURL("orders") {
		t.Fatalf("queue URL %q, want %q", url, srv.QueueURL("orders"))
	}
	id := send(t, c, url, "hello from Go")
	got := receive(t, c, url, 10)
	if len(got) != 1 || aws.ToString(got[0].Body) != "hello from Go" || aws.ToString(got[0].MessageId) != id {
		t.Fatalf("received %+v, want the one message %s", got, id)
	}
	if _, err := c.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: got[0].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	if left, err := srv.Peek("orders"); err != nil || len(left) != 0 {
		t.Fatalf("after delete, peek = %v, %v; want no message", left, err)
	}
}

func TestVisibilityTimeoutPassesOnAdvance(t *testing.T) {
	srv := retsutest.Start(t, retsutest.WithFrozenClock())
	c := client(t, srv)
	url := createQueue(t, c, "jobs", map[string]string{"VisibilityTimeout": "30"})
	id := send(t, c, url, "job-1")

	first := receive(t, c, url, 1)
	if len(first) != 1 || receiveCount(t, first[0]) != 1 {
		t.Fatalf("first receive: %+v", first)
	}
	before := srv.Now()
	srv.Advance(29 * time.Second)
	if again := receive(t, c, url, 1); len(again) != 0 {
		t.Fatalf("the message came back before its visibility timeout: %+v", again)
	}
	srv.Advance(2 * time.Second)
	if moved := srv.Now().Sub(before); moved != 31*time.Second {
		t.Fatalf("a frozen clock moved by %v over Advance(29s)+Advance(2s)", moved)
	}
	back := receive(t, c, url, 1)
	if len(back) != 1 || aws.ToString(back[0].MessageId) != id {
		t.Fatalf("after the timeout: %+v, want message %s", back, id)
	}
	if n := receiveCount(t, back[0]); n != 2 {
		t.Fatalf("ApproximateReceiveCount %d, want 2", n)
	}
}

func TestDeadLetterQueueByReceivesAlone(t *testing.T) {
	srv := retsutest.Start(t, retsutest.WithFrozenClock())
	c := client(t, srv)
	dlq := createQueue(t, c, "work-dlq", nil)
	attrs, err := c.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(dlq), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	arn := attrs.Attributes["QueueArn"]
	src := createQueue(t, c, "work", map[string]string{
		"VisibilityTimeout": "10",
		"RedrivePolicy":     `{"deadLetterTargetArn":"` + arn + `","maxReceiveCount":"2"}`,
	})
	id := send(t, c, src, "poison")

	for i := 1; i <= 2; i++ {
		got := receive(t, c, src, 1)
		if len(got) != 1 || receiveCount(t, got[0]) != i {
			t.Fatalf("receive %d: %+v", i, got)
		}
		srv.Advance(11 * time.Second) // never deleted: it comes back
	}
	if got := receive(t, c, src, 1); len(got) != 0 {
		t.Fatalf("past maxReceiveCount the source still gives %+v", got)
	}
	dead := receive(t, c, dlq, 1)
	if len(dead) != 1 || aws.ToString(dead[0].MessageId) != id || aws.ToString(dead[0].Body) != "poison" {
		t.Fatalf("dead-letter queue gives %+v, want message %s", dead, id)
	}

	h, err := srv.History(id)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range h.Events {
		kinds = append(kinds, e.Kind)
	}
	if !strings.Contains(strings.Join(kinds, ","), "dead_lettered") {
		t.Fatalf("history of %s: %v, want a dead_lettered event", id, kinds)
	}
	if h.Current == nil || h.Current.ReceiveCount != 3 || h.Current.DeadLetterSourceARN == "" {
		t.Fatalf("history's current message: %+v", h.Current)
	}
}

func TestPeekChangesNothing(t *testing.T) {
	srv := retsutest.Start(t, retsutest.WithFrozenClock())
	c := client(t, srv)
	url := createQueue(t, c, "inbox", map[string]string{"VisibilityTimeout": "30"})
	first := send(t, c, url, "one")
	if got := receive(t, c, url, 1); len(got) != 1 || aws.ToString(got[0].MessageId) != first {
		t.Fatalf("receive: %+v", got)
	}
	second := send(t, c, url, "two")

	peek := func() []retsutest.Message {
		t.Helper()
		msgs, err := srv.Peek("inbox")
		if err != nil {
			t.Fatal(err)
		}
		sort.Slice(msgs, func(i, j int) bool { return msgs[i].Body < msgs[j].Body })
		return msgs
	}
	for round := 0; round < 3; round++ { // peeking again and again changes nothing
		msgs := peek()
		if len(msgs) != 2 ||
			msgs[0].MessageID != first || msgs[0].State != "inflight" || msgs[0].ReceiveCount != 1 ||
			msgs[1].MessageID != second || msgs[1].State != "available" || msgs[1].ReceiveCount != 0 {
			t.Fatalf("peek %d: %+v", round, msgs)
		}
	}

	attrs, err := c.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil {
		t.Fatal(err)
	}
	if attrs.Attributes["ApproximateNumberOfMessages"] != "1" || attrs.Attributes["ApproximateNumberOfMessagesNotVisible"] != "1" {
		t.Fatalf("after peeks, SQS counts %v visible, %v in flight; want 1 and 1",
			attrs.Attributes["ApproximateNumberOfMessages"], attrs.Attributes["ApproximateNumberOfMessagesNotVisible"])
	}
	got := receive(t, c, url, 10)
	if len(got) != 1 || aws.ToString(got[0].MessageId) != second || receiveCount(t, got[0]) != 1 {
		t.Fatalf("after peeks, receive gives %+v; want only %s, received for the first time", got, second)
	}
	srv.Advance(31 * time.Second)
	got = receive(t, c, url, 10)
	sort.Slice(got, func(i, j int) bool { return aws.ToString(got[i].Body) < aws.ToString(got[j].Body) })
	if len(got) != 2 || receiveCount(t, got[0]) != 2 || receiveCount(t, got[1]) != 2 {
		t.Fatalf("past the timeout: %+v; want both, each received twice", got)
	}
}

// One server for several tests, reset before each, as a suite sharing a
// server from TestMain would do.
func TestResetBetweenTests(t *testing.T) {
	srv := retsutest.Start(t, retsutest.WithFrozenClock())
	c := client(t, srv)
	start := srv.Now()

	t.Run("first leaves a queue, a message and a moved clock", func(t *testing.T) {
		srv.Reset()
		url := createQueue(t, c, "leftover", nil)
		send(t, c, url, "stale")
		srv.Advance(time.Hour)
	})
	t.Run("second starts clean", func(t *testing.T) {
		srv.Reset()
		out, err := c.ListQueues(context.Background(), &sqs.ListQueuesInput{})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.QueueUrls) != 0 {
			t.Fatalf("after Reset, queues %v remain", out.QueueUrls)
		}
		if _, err := srv.Peek("leftover"); !isAdmin(err, 404) {
			t.Fatalf("peek of a queue gone with Reset: %v, want a 404 admin error", err)
		}
		clock, err := srv.Admin().Clock()
		if err != nil {
			t.Fatal(err)
		}
		if !clock.Frozen {
			t.Fatalf("Reset of a WithFrozenClock server left the clock running: %+v", clock)
		}
		if d := srv.Now().Sub(start); d >= time.Hour || d < 0 {
			t.Fatalf("after Reset the clock is %v from where it started; the hour was not undone", d)
		}
	})
}

func isAdmin(err error, status int) bool {
	var ae *retsutest.AdminError
	return errors.As(err, &ae) && ae.Status == status
}
