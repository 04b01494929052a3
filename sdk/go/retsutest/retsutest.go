// Package retsutest starts Retsu, an Amazon SQS wire-compatible emulator,
// from Go tests: a fresh server on a free loopback port per call, with the
// admin API's powers (a controllable clock, peek, message history, reset).
//
//	func TestJobs(t *testing.T) {
//		srv := retsutest.Start(t, retsutest.WithFrozenClock())
//		// point aws-sdk-go-v2's SQS client at srv.Endpoint, region srv.Region
//		srv.Advance(31 * time.Second) // past a visibility timeout
//		msgs, err := srv.Peek("jobs")
//		...
//	}
//
// The binary comes from WithBinary, else the RETSU_BIN environment variable,
// else PATH. It is started as
//
//	retsu --host 127.0.0.1 --port 0 --exit-on-stdin-close [--clock frozen] [--data-dir DIR] [--config FILE] [args...]
//
// with its standard input a pipe this process holds and never writes: when
// the test process ends, even by SIGKILL, the pipe closes and the server
// exits at once, so no server is left behind.
//
// # Failures
//
// Start fails the test (t.Fatalf) when the server cannot start, with the
// cause, the exit code and the last lines of the server's standard error;
// Launch returns the same as a *StartError (or a *BinaryNotFoundError).
//
// Freeze, Advance, Resume, Now and Reset return nothing: on a server from
// Start, a failure (a stopped server, an admin error) fails the test with
// t.Fatalf; on a server from Launch they panic with the error. Their
// error-returning forms are on Server.Admin. Peek and History return their
// error. Errors of a stopped server match ErrStopped (errors.Is); an admin
// API refusal is an *AdminError carrying the server's JSON error text.
package retsutest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	// DefaultRegion is the region of a server started without --region.
	DefaultRegion = "us-east-1"
	// DefaultAccountID is the account of a server started without --account-id.
	DefaultAccountID = "000000000000"
	// DefaultStartTimeout bounds the wait for the server's ready line.
	DefaultStartTimeout = 10 * time.Second

	readyPrefix  = "retsu ready "
	tlsPrefix    = "retsu tls "
	stderrLines  = 20
	maxLineBytes = 4096
	stopGrace    = 5 * time.Second
)

// ErrStopped is matched (errors.Is) by the error of any admin call made on a
// server that was stopped or has exited.
var ErrStopped = errors.New("retsutest: the server is stopped")

// Option configures Start and Launch.
type Option func(*settings)

type settings struct {
	frozen       bool
	args         []string
	dataDir      string
	config       string
	startTimeout time.Duration
	binary       string
	tls          bool
}

// WithFrozenClock starts the server with its clock frozen (--clock frozen):
// time moves only through Advance, so timing tests need no sleeps.
func WithFrozenClock() Option { return func(s *settings) { s.frozen = true } }

// WithArgs appends extra command-line arguments for retsu (for example
// "--strict-timing", or "--region", "eu-west-1"). A "--host" or "--port"
// among them replaces the default 127.0.0.1 and 0 (a free port).
func WithArgs(args ...string) Option {
	return func(s *settings) { s.args = append(s.args, args...) }
}

// WithDataDir keeps queues and messages in dir (--data-dir); without it the
// server keeps everything in memory.
func WithDataDir(dir string) Option { return func(s *settings) { s.dataDir = dir } }

// WithConfig loads a TOML configuration file (--config), e.g. to declare
// queues that exist at start.
func WithConfig(path string) Option { return func(s *settings) { s.config = path } }

// WithStartTimeout bounds the wait for the server to be ready (default 10 s);
// past it the process is killed and start fails.
func WithStartTimeout(d time.Duration) Option { return func(s *settings) { s.startTimeout = d } }

// WithTLS starts the server with --tls: Endpoint is then https://…, with a
// certificate from a local certificate authority Retsu keeps (in the data
// directory, else its per-user directory), named by CAFile; TLSConfig
// trusts it. Plain HTTP keeps answering on the same port.
func WithTLS() Option { return func(s *settings) { s.tls = true } }

// WithBinary names the retsu binary to run, instead of RETSU_BIN or PATH.
func WithBinary(path string) Option { return func(s *settings) { s.binary = path } }

// Server is one running retsu process.
type Server struct {
	// Endpoint is the server's base URL, e.g. http://127.0.0.1:41234
	// (https:// with WithTLS): the SQS endpoint for an AWS SDK client.
	Endpoint string
	// CAFile is, with WithTLS, the PEM file of the certificate authority
	// to trust for Endpoint (aws-sdk-go-v2: config.WithCustomCABundle, or
	// an http.Client with TLSConfig).
	CAFile string
	// Region is the server's region (us-east-1 unless --region was given).
	Region string
	// AccountID is the account in queue URLs (000000000000 unless --account-id was given).
	AccountID string
	// Binary is the path of the retsu binary that was started.
	Binary string
	// Args are the arguments it was started with.
	Args []string

	tb     testing.TB
	cmd    *exec.Cmd
	stdin  *os.File
	done   chan struct{} // closed once the process has been reaped
	stderr *tail
	http   *http.Client
	token  string
	// plain is the plain-HTTP base URL on the same port: the admin API's.
	plain string

	mu      sync.Mutex
	stopped bool
}

// Start starts a fresh server for the test and stops it through t.Cleanup
// (which, when the test failed, also logs the last lines of its stderr).
// When the server cannot start, the test fails (t.Fatalf) with the cause,
// the exit code and the last lines of the server's standard error.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := Launch(opts...)
	if err != nil {
		t.Fatalf("retsutest.Start: %v", err)
		return nil
	}
	s.tb = t
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() { // what the server said helps explain a failed test
			t.Logf("retsutest: last lines of the stderr of retsu at %s:\n    %s", s.Endpoint, strings.Join(s.Stderr(), "\n    "))
		}
	})
	return s
}

// Launch starts a fresh server outside of a test's life (for TestMain, or
// to check start-up errors as values). The caller must call Stop. Errors
// are a *BinaryNotFoundError or a *StartError.
func Launch(opts ...Option) (*Server, error) {
	cfg := settings{startTimeout: DefaultStartTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.startTimeout <= 0 {
		return nil, fmt.Errorf("retsutest: the start timeout must be positive, not %v", cfg.startTimeout)
	}
	bin, err := FindBinary(cfg.binary)
	if err != nil {
		return nil, err
	}
	// --host and --port given through WithArgs replace the defaults (the
	// binary refuses a flag given twice).
	var args []string
	if !hasFlag(cfg.args, "--host") {
		args = append(args, "--host", "127.0.0.1")
	}
	if !hasFlag(cfg.args, "--port") {
		args = append(args, "--port", "0")
	}
	args = append(args, "--exit-on-stdin-close")
	if cfg.frozen {
		args = append(args, "--clock", "frozen")
	}
	if cfg.dataDir != "" {
		args = append(args, "--data-dir", cfg.dataDir)
	}
	if cfg.config != "" {
		args = append(args, "--config", cfg.config)
	}
	if cfg.tls && !hasFlag(cfg.args, "--tls") {
		args = append(args, "--tls")
	}
	args = append(args, cfg.args...)
	return launch(bin, args, cfg.startTimeout)
}

// StartError says why a server did not start.
type StartError struct {
	Binary string
	Args   []string
	// Cause is what went wrong, e.g. "exited before it was ready".
	Cause string
	// ExitCode is the process's exit code, or -1 when it did not exit by
	// itself (killed after the timeout, or never started).
	ExitCode int
	// Stderr holds the last lines of the server's standard error.
	Stderr []string
	Err    error
}

func (e *StartError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "retsu did not start: %s", e.Cause)
	if e.ExitCode >= 0 {
		fmt.Fprintf(&b, " (exit code %d)", e.ExitCode)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	fmt.Fprintf(&b, "\n  command: %s %s", e.Binary, strings.Join(e.Args, " "))
	if len(e.Stderr) == 0 {
		b.WriteString("\n  stderr: (empty)")
	} else {
		fmt.Fprintf(&b, "\n  last lines of stderr:\n    %s", strings.Join(e.Stderr, "\n    "))
	}
	return b.String()
}

func (e *StartError) Unwrap() error { return e.Err }

// BinaryNotFoundError says where the retsu binary was looked for.
type BinaryNotFoundError struct {
	// Looked lists every place looked, each with what was found there.
	Looked []string
}

func (e *BinaryNotFoundError) Error() string {
	return "retsutest: no usable retsu binary; looked in:\n  " + strings.Join(e.Looked, "\n  ") +
		"\nInstall it: download retsu-<version>-x86_64-unknown-linux-gnu.tar.gz from the Retsu release," +
		" extract it and put its `retsu` on PATH (or set RETSU_BIN=/path/to/retsu);" +
		" or `cargo install retsu`; or pass retsutest.WithBinary(path)."
}

// FindBinary returns the retsu binary Start would run: explicit (when not
// empty), else $RETSU_BIN, else `retsu` on PATH. An explicit path or a set
// RETSU_BIN is used as given, with no fall-back, so a wrong one is reported
// rather than silently replaced.
func FindBinary(explicit string) (string, error) {
	var looked []string
	if explicit != "" {
		if why := unusable(explicit); why != "" {
			return "", &BinaryNotFoundError{Looked: []string{"WithBinary(" + quote(explicit) + "): " + why}}
		}
		return absolute(explicit), nil
	}
	if env, ok := os.LookupEnv("RETSU_BIN"); ok && env != "" {
		if why := unusable(env); why != "" {
			return "", &BinaryNotFoundError{Looked: []string{"RETSU_BIN=" + quote(env) + ": " + why}}
		}
		return absolute(env), nil
	}
	looked = append(looked, "RETSU_BIN: not set")
	path := os.Getenv("PATH")
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		candidate := filepath.Join(dir, "retsu")
		if unusable(candidate) == "" {
			return absolute(candidate), nil
		}
	}
	looked = append(looked, "PATH="+quote(path)+": no executable retsu in any of its directories")
	return "", &BinaryNotFoundError{Looked: looked}
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

func absolute(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// unusable says why path cannot be run, or "" when it can.
func unusable(path string) string {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "no such file"
	case err != nil:
		return err.Error()
	case info.IsDir():
		return "a directory, not a file"
	case info.Mode()&0o111 == 0:
		return "not executable (mode " + info.Mode().String() + ")"
	}
	return ""
}

func launch(bin string, args []string, timeout time.Duration) (*Server, error) {
	fail := func(cause string, code int, lines []string, err error) *StartError {
		return &StartError{Binary: bin, Args: args, Cause: cause, ExitCode: code, Stderr: lines, Err: err}
	}
	// Pipes of our own (not Cmd's StdoutPipe, which Wait closes): the read
	// ends stay ours until the drains reach EOF.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fail("cannot make a pipe", -1, nil, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fail("cannot make a pipe", -1, nil, err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fail("cannot make a pipe", -1, nil, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fail("cannot run the binary", -1, nil, err)
	}
	// The child has its copies; ours of its ends would keep the pipes open.
	closeAll(inR, outW, errW)

	s := &Server{
		Region:    flagValue(args, "--region", DefaultRegion),
		AccountID: flagValue(args, "--account-id", DefaultAccountID),
		Binary:    bin,
		Args:      args,
		cmd:       cmd,
		stdin:     inW,
		done:      make(chan struct{}),
		stderr:    &tail{max: stderrLines},
		http:      &http.Client{Timeout: 30 * time.Second},
		token:     flagValue(args, "--admin-token", os.Getenv("RETSU_ADMIN_TOKEN")),
	}
	// The ready line's endpoint, and the TLS line's (https endpoint, CA
	// file) printed before it with --tls.
	type endpoints struct{ plain, https, ca string }
	ready := make(chan endpoints, 1)
	stderrDone := make(chan struct{})
	go func() { // stdout: the ready line, then drained to the end
		found := false
		var seen endpoints
		eachLine(outR, func(line string) {
			if !found && strings.HasPrefix(line, tlsPrefix) {
				seen.https, seen.ca, _ = strings.Cut(line[len(tlsPrefix):], " ")
			}
			if !found && strings.HasPrefix(line, readyPrefix) && strings.HasPrefix(line[len(readyPrefix):], "http://") {
				found = true
				seen.plain = line[len(readyPrefix):]
				ready <- seen
			}
		})
		outR.Close()
	}()
	go func() { // stderr: drained, the last lines kept
		eachLine(errR, s.stderr.add)
		errR.Close()
		close(stderrDone)
	}()
	go func() {
		cmd.Wait()
		close(s.done)
	}()
	// The stderr that explains an exit may still be in the pipe: read it all
	// (bounded, in case something else holds the pipe open).
	lines := func() []string {
		select {
		case <-stderrDone:
		case <-time.After(time.Second):
		}
		return s.stderr.lines()
	}

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case seen := <-ready:
		s.plain = strings.TrimRight(seen.plain, "/")
		s.Endpoint = s.plain
		if seen.https != "" {
			s.Endpoint, s.CAFile = strings.TrimRight(seen.https, "/"), seen.ca
		}
		return s, nil
	case <-s.done:
		s.markStopped()
		inW.Close()
		var how error // an exit code says it all; a signal is named
		if cmd.ProcessState.ExitCode() < 0 {
			how = errors.New(cmd.ProcessState.String())
		}
		return nil, fail("the process exited before it was ready", cmd.ProcessState.ExitCode(), lines(), how)
	case <-timer.C:
		s.markStopped()
		cmd.Process.Kill()
		<-s.done
		inW.Close()
		return nil, fail(fmt.Sprintf("no ready line within %v; the process was killed", timeout), -1, lines(), nil)
	}
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// flagValue finds "--name value" or "--name=value" in args (the last wins,
// as for the binary's own parser), else returns def.
func flagValue(args []string, name, def string) string {
	v := def
	for i, a := range args {
		if a == name && i+1 < len(args) {
			v = args[i+1]
		} else if strings.HasPrefix(a, name+"=") {
			v = a[len(name)+1:]
		}
	}
	return v
}

func eachLine(r io.Reader, fn func(string)) {
	br := bufio.NewReaderSize(r, maxLineBytes)
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long) < maxLineBytes { // keep the start of an overlong line
				long = append(long, chunk...)
			}
			continue
		}
		if len(chunk) > 0 || len(long) > 0 {
			line := string(append(long, chunk...))
			if len(line) > maxLineBytes {
				line = line[:maxLineBytes] + "…"
			}
			fn(strings.TrimRight(line, "\r\n"))
			long = long[:0]
		}
		if err != nil {
			return
		}
	}
}

// tail keeps the last max lines written to it.
type tail struct {
	mu   sync.Mutex
	max  int
	keep []string
}

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.keep = append(t.keep, line)
	if len(t.keep) > t.max {
		t.keep = append(t.keep[:0], t.keep[len(t.keep)-t.max:]...)
	}
}

func (t *tail) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.keep...)
}

// Stderr returns the last lines (up to 20) the server wrote to its
// standard error.
func (s *Server) Stderr() []string { return s.stderr.lines() }

// PID is the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// QueueURL is the URL of the queue named name in the server's region and
// account: {Endpoint}/{AccountID}/{name}.
func (s *Server) QueueURL(name string) string {
	return s.Endpoint + "/" + s.AccountID + "/" + name
}

// TLSConfig trusts the certificate authority of a server started WithTLS
// (for an http.Client's Transport); nil without one.
func (s *Server) TLSConfig() (*tls.Config, error) {
	if s.CAFile == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(s.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("retsutest: %s holds no PEM certificate", s.CAFile)
	}
	return &tls.Config{RootCAs: pool}, nil
}

func (s *Server) markStopped() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
}

// Stop stops the server: it closes the server's standard input (retsu
// exits at once), waits up to 5 s, then kills it. It is idempotent, and
// Start's t.Cleanup calls it.
func (s *Server) Stop() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		<-s.done
		return
	}
	s.stopped = true
	s.mu.Unlock()
	s.stdin.Close()
	select {
	case <-s.done:
		return
	case <-time.After(stopGrace / 2):
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return
	case <-time.After(stopGrace / 2):
	}
	s.cmd.Process.Kill()
	<-s.done
}

// Exited reports whether the server process has ended (stopped, or died).
func (s *Server) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// AdminError is a non-2xx answer of the admin API.
type AdminError struct {
	Method, Path string
	// Status is the HTTP status, e.g. 404.
	Status int
	// Code and Message are the server's {"error":{"code","message"}}.
	Code, Message string
}

func (e *AdminError) Error() string {
	return fmt.Sprintf("retsu admin %s %s: %d %s: %s", e.Method, e.Path, e.Status, e.Code, e.Message)
}

// Admin gives the admin API's calls with their errors returned, where the
// Server's own Freeze, Advance, Resume, Now and Reset fail the test.
func (s *Server) Admin() *Admin { return &Admin{s: s} }

// Admin is the error-returning form of the admin API; see Server.Admin.
type Admin struct{ s *Server }

// Clock is the server's clock as GET/POST /_retsu/clock report it.
type Clock struct {
	// NowMS is the clock's time in milliseconds since the Unix epoch.
	NowMS int64 `json:"now_ms"`
	// Now is the same time in RFC 3339.
	Now      string `json:"now"`
	Frozen   bool   `json:"frozen"`
	OffsetMS int64  `json:"offset_ms"`
}

// Time is the clock's time.
func (c Clock) Time() time.Time { return time.UnixMilli(c.NowMS).UTC() }

// Message is one message as peek shows it (GET
// /_retsu/queues/{region}/{account}/{name}/messages). Times are
// milliseconds since the Unix epoch, 0 where the server has none.
type Message struct {
	MessageID           string                      `json:"message_id"`
	State               string                      `json:"state"` // available, inflight or delayed
	Body                string                      `json:"body"`
	MD5OfBody           string                      `json:"md5_of_body"`
	MessageAttributes   map[string]MessageAttribute `json:"message_attributes"`
	ReceiveCount        int                         `json:"receive_count"`
	SentMS              int64                       `json:"sent_ms"`
	EnqueuedMS          int64                       `json:"enqueued_ms"`
	ExpiresMS           int64                       `json:"expires_ms"`
	FirstReceiveMS      int64                       `json:"first_receive_ms"`
	VisibleAtMS         int64                       `json:"visible_at_ms"`
	GroupID             string                      `json:"group_id"`
	DedupID             string                      `json:"dedup_id"`
	SequenceNumber      string                      `json:"sequence_number"`
	DeadLetterSourceARN string                      `json:"dead_letter_source_arn"`
}

// MessageAttribute is one message attribute; BinaryValue is base64.
type MessageAttribute struct {
	DataType    string `json:"DataType"`
	StringValue string `json:"StringValue,omitempty"`
	BinaryValue string `json:"BinaryValue,omitempty"`
}

// History is a message's whole life (GET /_retsu/messages/{id}).
type History struct {
	MessageID string  `json:"message_id"`
	Events    []Event `json:"events"`
	// Truncated is true when older events fell past the history's bounds.
	Truncated bool `json:"truncated"`
	// Current is the message as it is now, nil once it has left its queue.
	Current *Message `json:"current"`
}

// Event is one step of a message's life.
type Event struct {
	Seq           uint64   `json:"seq"`
	AtMS          int64    `json:"at_ms"`
	Kind          string   `json:"kind"` // e.g. sent, received, released, deleted, dead_lettered
	Queue         QueueRef `json:"queue"`
	MessageID     string   `json:"message_id"`
	ReceiveCount  int      `json:"receive_count"`
	VisibleAtMS   int64    `json:"visible_at_ms"`
	ReceiptHandle string   `json:"receipt_handle"`
	Detail        string   `json:"detail"`
}

// QueueRef names a queue.
type QueueRef struct {
	Region  string `json:"region"`
	Account string `json:"account"`
	Name    string `json:"name"`
	ARN     string `json:"arn,omitempty"`
}

// call sends one admin request and decodes its JSON answer into out.
func (s *Server) call(what, method, path string, body, out any) error {
	s.mu.Lock()
	stopped := s.stopped
	s.mu.Unlock()
	if stopped {
		return fmt.Errorf("cannot %s: %w (Stop was called; its endpoint was %s)", what, ErrStopped, s.Endpoint)
	}
	if s.Exited() {
		return fmt.Errorf("cannot %s: %w (the process exited: %s; last lines of stderr:\n    %s)",
			what, ErrStopped, s.cmd.ProcessState, strings.Join(s.stderr.lines(), "\n    "))
	}
	var reader io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		reader = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.plain+path, reader)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		if s.Exited() {
			return fmt.Errorf("cannot %s: %w (the process exited: %s)", what, ErrStopped, s.cmd.ProcessState)
		}
		return fmt.Errorf("cannot %s: %w", what, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("cannot %s: reading the answer: %w", what, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var shape struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		e := &AdminError{Method: method, Path: path, Status: resp.StatusCode}
		if json.Unmarshal(raw, &shape) == nil && shape.Error.Message != "" {
			e.Code, e.Message = shape.Error.Code, shape.Error.Message
		} else {
			e.Code, e.Message = http.StatusText(resp.StatusCode), strings.TrimSpace(string(raw))
		}
		return fmt.Errorf("cannot %s: %w", what, e)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("cannot %s: the answer is not the expected JSON: %w: %s", what, err, raw)
		}
	}
	return nil
}

func (a *Admin) clock(what string, body any) (Clock, error) {
	var c Clock
	var err error
	if body == nil {
		err = a.s.call(what, http.MethodGet, "/_retsu/clock", nil, &c)
	} else {
		err = a.s.call(what, http.MethodPost, "/_retsu/clock", body, &c)
	}
	return c, err
}

// Clock reads the server's clock.
func (a *Admin) Clock() (Clock, error) { return a.clock("read the clock", nil) }

// Freeze stops the server's clock.
func (a *Admin) Freeze() (Clock, error) {
	return a.clock("freeze the clock", map[string]bool{"freeze": true})
}

// Resume lets the server's clock run again from where it stands.
func (a *Admin) Resume() (Clock, error) {
	return a.clock("resume the clock", map[string]bool{"resume": true})
}

// Advance moves the server's clock forward by d (whole milliseconds);
// every visibility timeout, delay and retention that falls due fires.
func (a *Admin) Advance(d time.Duration) (Clock, error) {
	what := fmt.Sprintf("advance the clock by %v", d)
	if d < 0 {
		return Clock{}, fmt.Errorf("cannot %s: time never goes backwards", what)
	}
	return a.clock(what, map[string]int64{"advance": d.Milliseconds()})
}

// Peek lists a queue's messages in every state without changing them.
func (a *Admin) Peek(name string) ([]Message, error) {
	var out struct {
		Messages []Message `json:"messages"`
	}
	path := "/_retsu/queues/" + url.PathEscape(a.s.Region) + "/" + url.PathEscape(a.s.AccountID) + "/" +
		url.PathEscape(name) + "/messages?state=all&limit=10000"
	if err := a.s.call("peek queue "+name, http.MethodGet, path, nil, &out); err != nil {
		return nil, err
	}
	if out.Messages == nil {
		out.Messages = []Message{}
	}
	return out.Messages, nil
}

// History returns a message's whole life, also after it left its queue.
func (a *Admin) History(messageID string) (*History, error) {
	var h History
	if err := a.s.call("read the history of message "+messageID, http.MethodGet,
		"/_retsu/messages/"+url.PathEscape(messageID), nil, &h); err != nil {
		return nil, err
	}
	return &h, nil
}

// Reset deletes every queue and message, forgets history and faults, and
// puts the clock back on system time, running (the server's own reset).
func (a *Admin) Reset() error {
	return a.s.call("reset the server", http.MethodPost, "/_retsu/reset", nil, nil)
}

// fatal reports err through the test of Start, or panics for Launch.
func (s *Server) fatal(err error) {
	if s.tb != nil {
		s.tb.Helper()
		s.tb.Fatalf("retsutest: %v", err)
		return
	}
	panic(err)
}

// Freeze stops the server's clock. On failure it fails the test (t.Fatalf);
// see Admin().Freeze for the error-returning form.
func (s *Server) Freeze() {
	if s.tb != nil {
		s.tb.Helper()
	}
	if _, err := s.Admin().Freeze(); err != nil {
		s.fatal(err)
	}
}

// Resume lets the clock run again. On failure it fails the test (t.Fatalf).
func (s *Server) Resume() {
	if s.tb != nil {
		s.tb.Helper()
	}
	if _, err := s.Admin().Resume(); err != nil {
		s.fatal(err)
	}
}

// Advance moves the clock forward by d; what falls due (visibility
// timeouts, delays, retention) fires at once. On failure it fails the test
// (t.Fatalf).
func (s *Server) Advance(d time.Duration) {
	if s.tb != nil {
		s.tb.Helper()
	}
	if _, err := s.Admin().Advance(d); err != nil {
		s.fatal(err)
	}
}

// Now is the server's clock time. On failure it fails the test (t.Fatalf).
func (s *Server) Now() time.Time {
	if s.tb != nil {
		s.tb.Helper()
	}
	c, err := s.Admin().Clock()
	if err != nil {
		s.fatal(err)
	}
	return c.Time()
}

// Peek lists the messages of the queue named name (in Region and
// AccountID), in every state, without changing any state, receive count or
// visibility.
func (s *Server) Peek(name string) ([]Message, error) { return s.Admin().Peek(name) }

// History returns a message's whole life, event by event.
func (s *Server) History(messageID string) (*History, error) { return s.Admin().History(messageID) }

// Reset deletes every queue, message and history, as a fresh server has
// none. The server's reset also puts the clock back on system time,
// running; for a server started WithFrozenClock, Reset freezes it again, so
// every test starts as the first did. On failure it fails the test
// (t.Fatalf).
func (s *Server) Reset() {
	if s.tb != nil {
		s.tb.Helper()
	}
	if err := s.Admin().Reset(); err != nil {
		s.fatal(err)
	}
	if flagValue(s.Args, "--clock", "running") == "frozen" {
		if _, err := s.Admin().Freeze(); err != nil {
			s.fatal(err)
		}
	}
}
