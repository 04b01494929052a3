package retsutest

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// WithTLS: the https endpoint trusted through TLSConfig, queue URLs in
// https, plain HTTP (and so the admin API) still on the same port. Runs
// when a retsu binary is found (RETSU_BIN or PATH).
func TestWithTLSServesHTTPSBesidePlainHTTP(t *testing.T) {
	if _, err := FindBinary(""); err != nil {
		t.Skipf("no retsu binary: %v", err)
	}
	dir := t.TempDir()
	srv := Start(t, WithTLS(), WithDataDir(dir))
	if !strings.HasPrefix(srv.Endpoint, "https://127.0.0.1:") {
		t.Fatalf("Endpoint %q, want https://", srv.Endpoint)
	}
	if srv.CAFile != dir+"/tls/ca.pem" {
		t.Fatalf("CAFile %q, want it in the data directory", srv.CAFile)
	}
	config, err := srv.TLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: config}}
	form := url.Values{"Action": {"CreateQueue"}, "QueueName": {"sealed"}}
	resp, err := client.PostForm(srv.Endpoint+"/", form)
	if err != nil {
		t.Fatalf("CreateQueue over TLS: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := "<QueueUrl>" + srv.QueueURL("sealed") + "</QueueUrl>"; !strings.Contains(string(body), want) {
		t.Fatalf("answer %s, want %s", body, want)
	}
	// A client that does not trust the CA is refused.
	if _, err := http.Get(srv.Endpoint + "/health"); err == nil {
		t.Fatal("a client without the CA got an answer")
	}
	// The admin API (plain HTTP on the same port) answers as before.
	if msgs, err := srv.Peek("sealed"); err != nil || len(msgs) != 0 {
		t.Fatalf("Peek: %v %v", msgs, err)
	}
}
