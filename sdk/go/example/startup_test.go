package example

import (
	"context"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/retsu-dev/retsu/sdk/go/retsutest"
)

// TestStartupTime measures the fixture's start-up, from the call to
// retsutest.Start to the first answered SQS request, over
// RETSU_STARTUP_RUNS starts (example/startup.sh sets 20).
func TestStartupTime(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("RETSU_STARTUP_RUNS"))
	if runs <= 0 {
		t.Skip("set RETSU_STARTUP_RUNS (example/startup.sh does)")
	}
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion(retsutest.DefaultRegion),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")))
	if err != nil {
		t.Fatal(err)
	}
	var took []time.Duration
	for i := 0; i < runs; i++ {
		t.Run(strconv.Itoa(i+1), func(t *testing.T) {
			began := time.Now()
			srv := retsutest.Start(t)
			c := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(srv.Endpoint) })
			if _, err := c.ListQueues(context.Background(), &sqs.ListQueuesInput{}); err != nil {
				t.Fatal(err)
			}
			took = append(took, time.Since(began))
		})
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	median := took[len(took)/2]
	if len(took)%2 == 0 {
		median = (took[len(took)/2-1] + took[len(took)/2]) / 2
	}
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) }
	t.Logf("startup (retsutest.Start to first answered SQS request), %d starts: median %s ms, min %s ms, max %s ms",
		len(took), ms(median), ms(took[0]), ms(took[len(took)-1]))
}
