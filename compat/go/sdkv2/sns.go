// The SNS scenarios: aws-sdk-go-v2 service/sns (AWS Query protocol) against
// the same fresh retsu, the deliveries read back with service/sqs. main runs
// them when given a third argument (the SNS results file); compat/run.sh
// judges their requests apart from the SQS ones (wiretap fold --service sns).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	h "retsu.dev/compat/harness"
)

const (
	snsRegion  = "us-east-1"
	snsAccount = "000000000000"
)

var (
	sc        *sns.Client
	snsQueues []string
	snsTopics []string
)

type snsQueue struct{ url, arn string }

func snsMakeQueue(stem string, fifo bool) snsQueue {
	name := h.Name(stem)
	attrs := map[string]string{}
	if fifo {
		name += ".fifo"
		attrs["FifoQueue"] = "true"
	}
	out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &name, Attributes: attrs})
	h.Must(err, "CreateQueue "+name)
	snsQueues = append(snsQueues, *out.QueueUrl)
	return snsQueue{*out.QueueUrl, fmt.Sprintf("arn:aws:sqs:%s:%s:%s", snsRegion, snsAccount, name)}
}

func snsMakeTopic(stem string, fifo bool, attrs map[string]string) string {
	name := h.Name(stem)
	a := map[string]string{}
	for k, v := range attrs {
		a[k] = v
	}
	if fifo {
		name += ".fifo"
		a["FifoTopic"] = "true"
	}
	out, err := sc.CreateTopic(ctx, &sns.CreateTopicInput{Name: &name, Attributes: a})
	h.Must(err, "CreateTopic "+name)
	snsTopics = append(snsTopics, *out.TopicArn)
	return *out.TopicArn
}

func snsSubscribe(topicArn, queueArn string, attrs map[string]string) {
	out, err := sc.Subscribe(ctx, &sns.SubscribeInput{TopicArn: &topicArn, Protocol: sv("sqs"), Endpoint: &queueArn,
		Attributes: attrs, ReturnSubscriptionArn: true})
	h.Must(err, "Subscribe")
	h.Check(out.SubscriptionArn != nil && strings.HasPrefix(*out.SubscriptionArn, topicArn+":"),
		"SubscriptionArn %v is not under %s", aws.ToString(out.SubscriptionArn), topicArn)
}

// snsDrain receives (and deletes) until want messages arrived or d passed.
func snsDrain(url string, want int, d time.Duration, attributes bool) []types.Message {
	var got []types.Message
	deadline := time.Now().Add(d)
	for len(got) < want && time.Now().Before(deadline) {
		in := &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1}
		if attributes {
			in.MessageAttributeNames = []string{"All"}
		}
		out, err := c.ReceiveMessage(ctx, in)
		h.Must(err, "ReceiveMessage")
		for _, m := range out.Messages {
			got = append(got, m)
			_, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle})
			h.Must(err, "DeleteMessage")
		}
	}
	return got
}

func envelopeOf(m types.Message, what string) map[string]any {
	var env map[string]any
	if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &env); err != nil {
		h.Fail("%s: the body is not a JSON envelope (%v): %.200s", what, err, aws.ToString(m.Body))
	}
	return env
}

// snsExpect requires err to be the modelled *T with error code code and HTTP status; returns the message.
func snsExpect[T error](err error, code string, status int, what string) string {
	h.Check(err != nil, "%s: expected %s, the call succeeded", what, code)
	var typed T
	if !errors.As(err, &typed) {
		h.Fail("%s: expected %T, got %T: %v", what, typed, err, err)
	}
	var api smithy.APIError
	h.Check(errors.As(err, &api), "%s: not an API error: %v", what, err)
	h.Eq(api.ErrorCode(), code, what+": error code")
	var re *awshttp.ResponseError
	h.Check(errors.As(err, &re), "%s: no HTTP response in %v", what, err)
	h.Eq(re.HTTPStatusCode(), status, what+": HTTP status")
	return api.ErrorMessage()
}

func strAttr(v string) snstypes.MessageAttributeValue {
	return snstypes.MessageAttributeValue{DataType: sv("String"), StringValue: sv(v)}
}

// ------------------------------------------------------------------ scenarios

func snsTopicLifecycle() any {
	name := h.Name("life")
	out, err := sc.CreateTopic(ctx, &sns.CreateTopicInput{Name: &name})
	h.Must(err, "CreateTopic")
	arn := *out.TopicArn
	snsTopics = append(snsTopics, arn)
	h.Eq(arn, fmt.Sprintf("arn:aws:sns:%s:%s:%s", snsRegion, snsAccount, name), "TopicArn")
	again, err := sc.CreateTopic(ctx, &sns.CreateTopicInput{Name: &name})
	h.Must(err, "CreateTopic again")
	h.Eq(*again.TopicArn, arn, "CreateTopic again")
	_, err = sc.SetTopicAttributes(ctx, &sns.SetTopicAttributesInput{TopicArn: &arn, AttributeName: sv("DisplayName"), AttributeValue: sv("Life cycle")})
	h.Must(err, "SetTopicAttributes")
	ga, err := sc.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: &arn})
	h.Must(err, "GetTopicAttributes")
	h.Eq(ga.Attributes["DisplayName"], "Life cycle", "DisplayName")
	found := false
	for p := sns.NewListTopicsPaginator(sc, &sns.ListTopicsInput{}); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		h.Must(err, "ListTopics")
		for _, t := range page.Topics {
			found = found || aws.ToString(t.TopicArn) == arn
		}
	}
	h.Check(found, "ListTopics does not list %s", arn)
	_, err = sc.TagResource(ctx, &sns.TagResourceInput{ResourceArn: &arn, Tags: []snstypes.Tag{{Key: sv("team"), Value: sv("a")}, {Key: sv("env"), Value: sv("test")}}})
	h.Must(err, "TagResource")
	tagsOf := func() []string {
		lt, err := sc.ListTagsForResource(ctx, &sns.ListTagsForResourceInput{ResourceArn: &arn})
		h.Must(err, "ListTagsForResource")
		var kv []string
		for _, t := range lt.Tags {
			kv = append(kv, aws.ToString(t.Key)+"="+aws.ToString(t.Value))
		}
		sort.Strings(kv)
		return kv
	}
	h.Eq(tagsOf(), []string{"env=test", "team=a"}, "ListTagsForResource")
	_, err = sc.UntagResource(ctx, &sns.UntagResourceInput{ResourceArn: &arn, TagKeys: []string{"env"}})
	h.Must(err, "UntagResource")
	h.Eq(tagsOf(), []string{"team=a"}, "tags after UntagResource")
	_, err = sc.DeleteTopic(ctx, &sns.DeleteTopicInput{TopicArn: &arn})
	h.Must(err, "DeleteTopic")
	_, err = sc.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: &arn})
	msg := snsExpect[*snstypes.NotFoundException](err, "NotFound", 404, "GetTopicAttributes after DeleteTopic")
	h.Check(strings.Contains(msg, "Topic does not exist"), "NotFound message %q", msg)
	return "NotFoundException: " + msg
}

func snsFanoutEnvelope() any {
	arn := snsMakeTopic("fan", false, nil)
	qs := []snsQueue{snsMakeQueue("fan-a", false), snsMakeQueue("fan-b", false)}
	for _, q := range qs {
		snsSubscribe(arn, q.arn, nil)
	}
	text := "hello \"fan-out\"\nsecond line"
	out, err := sc.Publish(ctx, &sns.PublishInput{TopicArn: &arn, Message: &text, Subject: sv("Greeting"),
		MessageAttributes: map[string]snstypes.MessageAttributeValue{"colour": strAttr("blue")}})
	h.Must(err, "Publish")
	id := aws.ToString(out.MessageId)
	for i, q := range qs {
		got := snsDrain(q.url, 1, 5*time.Second, false)
		h.Eq(len(got), 1, fmt.Sprintf("messages in queue %d", i+1))
		env := envelopeOf(got[0], fmt.Sprintf("queue %d", i+1))
		h.Eq(env["Type"], any("Notification"), "Type")
		h.Eq(env["MessageId"], any(id), "MessageId (Publish's)")
		h.Eq(env["TopicArn"], any(arn), "TopicArn")
		h.Eq(env["Subject"], any("Greeting"), "Subject")
		h.Eq(env["Message"], any(text), "Message")
		h.Eq(env["MessageAttributes"], any(map[string]any{"colour": map[string]any{"Type": "String", "Value": "blue"}}), "MessageAttributes")
		h.Eq(env["SignatureVersion"], any("1"), "SignatureVersion")
		for _, k := range []string{"Timestamp", "Signature", "SigningCertURL", "UnsubscribeURL"} {
			s, ok := env[k].(string)
			h.Check(ok && s != "", "envelope has no %s", k)
		}
	}
	return "both queues got envelope " + id
}

func snsRawAndFilter() any {
	arn := snsMakeTopic("raw", false, nil)
	raw := snsMakeQueue("raw", false)
	blue := snsMakeQueue("blue", false)
	snsSubscribe(arn, raw.arn, map[string]string{"RawMessageDelivery": "true"})
	snsSubscribe(arn, blue.arn, map[string]string{"FilterPolicy": `{"colour":["blue"]}`})
	for _, colour := range []string{"red", "blue"} {
		_, err := sc.Publish(ctx, &sns.PublishInput{TopicArn: &arn, Message: sv("a " + colour + " one"),
			MessageAttributes: map[string]snstypes.MessageAttributeValue{"colour": strAttr(colour)}})
		h.Must(err, "Publish "+colour)
	}
	rawGot := snsDrain(raw.url, 2, 5*time.Second, true)
	var bodies []string
	for _, m := range rawGot {
		body := aws.ToString(m.Body)
		bodies = append(bodies, body)
		colour := strings.Split(body, " ")[1]
		h.Eq(len(m.MessageAttributes), 1, "SQS message attributes of "+body)
		a := m.MessageAttributes["colour"]
		h.Eq([]string{aws.ToString(a.DataType), aws.ToString(a.StringValue)}, []string{"String", colour}, "SQS attribute colour of "+body)
	}
	sort.Strings(bodies)
	h.Eq(bodies, []string{"a blue one", "a red one"}, "raw bodies")
	var filtered []any
	for _, m := range snsDrain(blue.url, 2, 3*time.Second, false) {
		filtered = append(filtered, envelopeOf(m, "filtered")["Message"])
	}
	h.Eq(filtered, []any{"a blue one"}, "messages through the filter")
	return "raw body + SQS attribute; filter let only blue through"
}

func snsFifo() any {
	arn := snsMakeTopic("fifo", true, map[string]string{"ContentBasedDeduplication": "true"})
	q := snsMakeQueue("fifo", true)
	snsSubscribe(arn, q.arn, map[string]string{"RawMessageDelivery": "true"})
	var seqs []string
	for i := 0; i < 3; i++ {
		out, err := sc.Publish(ctx, &sns.PublishInput{TopicArn: &arn, Message: sv(fmt.Sprintf("m%d", i)), MessageGroupId: sv("g")})
		h.Must(err, fmt.Sprintf("Publish m%d", i))
		h.Check(aws.ToString(out.SequenceNumber) != "", "Publish m%d returned no SequenceNumber", i)
		seqs = append(seqs, *out.SequenceNumber)
	}
	n := make([]*big.Int, 3)
	for i, s := range seqs {
		v, ok := new(big.Int).SetString(s, 10)
		h.Check(ok, "SequenceNumber %q is not a number", s)
		n[i] = v
	}
	h.Check(n[0].Cmp(n[1]) < 0 && n[1].Cmp(n[2]) < 0, "SequenceNumbers not increasing: %v", seqs)
	again, err := sc.Publish(ctx, &sns.PublishInput{TopicArn: &arn, Message: sv("m0"), MessageGroupId: sv("g")})
	h.Must(err, "Publish m0 again")
	h.Eq(aws.ToString(again.SequenceNumber), seqs[0], "SequenceNumber of the duplicate publish")
	var bodies []string
	for _, m := range snsDrain(q.url, 4, 4*time.Second, false) {
		bodies = append(bodies, aws.ToString(m.Body))
	}
	h.Eq(bodies, []string{"m0", "m1", "m2"}, "FIFO queue contents, in order")
	return "3 delivered in order; duplicate answered sequence " + seqs[0]
}

func snsErrors() any {
	missing := fmt.Sprintf("arn:aws:sns:%s:%s:%s", snsRegion, snsAccount, h.Name("missing"))
	_, err := sc.Publish(ctx, &sns.PublishInput{TopicArn: &missing, Message: sv("x")})
	m1 := snsExpect[*snstypes.NotFoundException](err, "NotFound", 404, "Publish to a missing topic")
	h.Check(strings.Contains(m1, "Topic does not exist"), "NotFound message %q", m1)
	_, err = sc.CreateTopic(ctx, &sns.CreateTopicInput{Name: sv("bad name")})
	m2 := snsExpect[*snstypes.InvalidParameterException](err, "InvalidParameter", 400, "CreateTopic 'bad name'")
	h.Check(strings.HasPrefix(m2, "Invalid parameter:"), "InvalidParameter message %q", m2)
	return "NotFoundException: " + m1 + "; InvalidParameterException: " + m2
}

// runSns runs the SNS scenarios into out; c (the SQS client) is already set up.
func runSns(out string) int {
	sc = sns.New(sns.Options{
		Region:       snsRegion,
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIAIOSFODNN7EXAMPLE", "secret", ""),
		Retryer:      closedConnRetryer(),
	})
	funcs := map[string]func() any{
		"sns_topic_lifecycle": snsTopicLifecycle, "sns_fanout_envelope": snsFanoutEnvelope,
		"sns_raw_and_filter": snsRawAndFilter, "sns_fifo": snsFifo, "sns_errors": snsErrors,
	}
	cleanup := func() {
		for _, u := range snsQueues {
			u := u
			c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &u})
		}
		for _, t := range snsTopics {
			t := t
			sc.DeleteTopic(ctx, &sns.DeleteTopicInput{TopicArn: &t})
		}
		snsQueues, snsTopics = nil, nil
	}
	return h.RunScenarios(h.SnsScenarios, "sns", "aws-sdk-go-v2 service/sns", depVersion("github.com/aws/aws-sdk-go-v2/service/sns"),
		"query", map[string]any{"go": strings.TrimPrefix(runtimeVersion(), "go"), "sqs_reader": "aws-sdk-go-v2 service/sqs (json)"},
		out, funcs, cleanup)
}
