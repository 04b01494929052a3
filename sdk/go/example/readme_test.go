// The usage example of sdk/go/README.md, kept here so that it compiles and passes.

package example

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/retsu-dev/retsu/sdk/go/retsutest"
)

func TestJobComesBack(t *testing.T) {
	srv := retsutest.Start(t, retsutest.WithFrozenClock()) // stopped by t.Cleanup
	c := sqs.NewFromConfig(aws.Config{Region: srv.Region,
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")},
		func(o *sqs.Options) { o.BaseEndpoint = aws.String(srv.Endpoint) })
	ctx := context.Background()
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("jobs"),
		Attributes: map[string]string{"VisibilityTimeout": "30"}})
	if err != nil {
		t.Fatal(err)
	}
	c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("job-1")})
	c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl}) // and not deleted

	srv.Advance(31 * time.Second) // past the visibility timeout, without sleeping
	msgs, err := srv.Peek("jobs") // every message as it is; peeking changes nothing
	if err != nil || len(msgs) != 1 || msgs[0].State != "available" || msgs[0].ReceiveCount != 1 {
		t.Fatalf("peek: %+v, %v", msgs, err)
	}
}
