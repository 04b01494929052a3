package example

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/retsu-dev/retsu/sdk/go/retsutest"
)

// WithTLS: aws-sdk-go-v2 over https://, trusting the CA Retsu made
// (config.WithCustomCABundle, as AWS_CA_BUNDLE would).
func TestOverTLSWithTheCATrusted(t *testing.T) {
	srv := retsutest.Start(t, retsutest.WithTLS(), retsutest.WithDataDir(t.TempDir()))
	if !strings.HasPrefix(srv.Endpoint, "https://") || srv.CAFile == "" {
		t.Fatalf("endpoint %q, CA %q", srv.Endpoint, srv.CAFile)
	}
	ca, err := os.Open(srv.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close()
	cfg, err := config.LoadDefaultConfig(context.Background(),
		config.WithRegion(srv.Region),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")),
		config.WithCustomCABundle(ca),
	)
	if err != nil {
		t.Fatal(err)
	}
	c := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(srv.Endpoint) })
	url := createQueue(t, c, "sealed", nil)
	if url != srv.QueueURL("sealed") {
		t.Fatalf("queue URL %q, want %q", url, srv.QueueURL("sealed"))
	}
	send(t, c, url, "over tls")
	if got := receive(t, c, url, 10); len(got) != 1 || aws.ToString(got[0].Body) != "over tls" {
		t.Fatalf("received %v", got)
	}
}
