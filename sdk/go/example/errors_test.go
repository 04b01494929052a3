package example

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retsu-dev/retsu/sdk/go/retsutest"
)

func startError(t *testing.T, err error) *retsutest.StartError {
	t.Helper()
	var se *retsutest.StartError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T), want a *retsutest.StartError", err, err)
	}
	return se
}

func TestBadConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "retsu.toml")
	if err := os.WriteFile(path, []byte("[[queues]]\nname = \"jobs\"\nattributes = { VisibilityTimeout = \"soon\" }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := retsutest.Launch(retsutest.WithConfig(path))
	if err == nil {
		srv.Stop()
		t.Fatal("a bad configuration file started a server")
	}
	se := startError(t, err)
	if se.ExitCode != 2 {
		t.Errorf("exit code %d, want 2 (bad configuration)", se.ExitCode)
	}
	stderr := strings.Join(se.Stderr, "\n")
	if !strings.Contains(stderr, path) || !strings.Contains(err.Error(), path) {
		t.Errorf("the error does not name the file %s:\n%v", path, err)
	}
	if !strings.Contains(err.Error(), "exited before it was ready") {
		t.Errorf("the error does not say the cause:\n%v", err)
	}
}

func TestPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	srv, err := retsutest.Launch(retsutest.WithArgs("--port", port))
	if err == nil {
		srv.Stop()
		t.Fatalf("a server started on port %s, which is in use", port)
	}
	se := startError(t, err)
	if se.ExitCode != 1 {
		t.Errorf("exit code %d, want 1", se.ExitCode)
	}
	if !strings.Contains(err.Error(), "cannot listen on") || !strings.Contains(err.Error(), port) {
		t.Errorf("the error does not carry retsu's cause:\n%v", err)
	}
}

func TestStoppedServerRefusesTheClock(t *testing.T) {
	srv, err := retsutest.Launch(retsutest.WithFrozenClock())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Admin().Advance(time.Second); err != nil {
		t.Fatalf("a running server refused to advance: %v", err)
	}
	srv.Stop()
	srv.Stop() // idempotent
	if !srv.Exited() {
		t.Fatal("Stop returned with the process still running")
	}
	_, err = srv.Admin().Advance(30 * time.Second)
	if !errors.Is(err, retsutest.ErrStopped) || !strings.Contains(err.Error(), "advance the clock by 30s") {
		t.Fatalf("advance on a stopped server: %v, want ErrStopped saying what was refused", err)
	}
	if _, err := srv.Peek("any"); !errors.Is(err, retsutest.ErrStopped) {
		t.Fatalf("peek on a stopped server: %v, want ErrStopped", err)
	}
	// A server from Launch has no test to fail: its void methods panic.
	func() {
		defer func() {
			if r, _ := recover().(error); !errors.Is(r, retsutest.ErrStopped) {
				t.Fatalf("Advance on a stopped Launch server panicked with %v, want ErrStopped", r)
			}
		}()
		srv.Advance(time.Second)
	}()
}

// recordingTB stands in for a test so that Start's and the void methods'
// t.Fatalf can be seen rather than failing this test.
type recordingTB struct {
	testing.TB
	mu    sync.Mutex
	fatal []string
}

func (r *recordingTB) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.fatal = append(r.fatal, fmt.Sprintf(format, args...))
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recordingTB) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

// run calls fn as a test body would run: in its own goroutine, which
// Fatalf ends. It returns the Fatalf messages.
func (r *recordingTB) run(fn func()) []string {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.fatal...)
}

func TestStoppedServerFailsTheTest(t *testing.T) {
	rec := &recordingTB{TB: t}
	var srv *retsutest.Server
	if msgs := rec.run(func() { srv = retsutest.Start(rec) }); len(msgs) != 0 {
		t.Fatalf("Start failed: %v", msgs)
	}
	srv.Stop()
	msgs := rec.run(func() {
		srv.Advance(time.Minute)
		t.Error("Advance on a stopped server returned")
	})
	if len(msgs) != 1 || !strings.Contains(msgs[0], "stopped") || !strings.Contains(msgs[0], "advance the clock by 1m0s") {
		t.Fatalf("Advance on a stopped server reported %q", msgs)
	}
}

func TestMissingBinary(t *testing.T) {
	t.Run("RETSU_BIN names nothing", func(t *testing.T) {
		t.Setenv("RETSU_BIN", filepath.Join(t.TempDir(), "no-such-retsu"))
		_, err := retsutest.Launch()
		var nf *retsutest.BinaryNotFoundError
		if !errors.As(err, &nf) || !strings.Contains(err.Error(), "RETSU_BIN=") || !strings.Contains(err.Error(), "no such file") {
			t.Fatalf("error %v, want a BinaryNotFoundError naming RETSU_BIN", err)
		}
	})
	t.Run("not executable", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "retsu")
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := retsutest.Launch(retsutest.WithBinary(path))
		if !strings.Contains(fmt.Sprint(err), "not executable") {
			t.Fatalf("error %v, want 'not executable'", err)
		}
	})
	t.Run("neither RETSU_BIN nor PATH: the test fails saying how to install", func(t *testing.T) {
		t.Setenv("RETSU_BIN", "")
		empty := t.TempDir()
		t.Setenv("PATH", empty)
		rec := &recordingTB{TB: t}
		msgs := rec.run(func() {
			retsutest.Start(rec)
			t.Error("Start returned without a binary")
		})
		if len(msgs) != 1 {
			t.Fatalf("Start reported %q", msgs)
		}
		for _, want := range []string{"RETSU_BIN: not set", empty, "x86_64-unknown-linux-gnu.tar.gz", "cargo install retsu"} {
			if !strings.Contains(msgs[0], want) {
				t.Errorf("the failure does not say %q:\n%s", want, msgs[0])
			}
		}
	})
}

func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "retsu")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBinaryExitsAtStart(t *testing.T) {
	bin := script(t, "echo 'retsu: something went wrong' >&2\nexit 7\n")
	_, err := retsutest.Launch(retsutest.WithBinary(bin))
	se := startError(t, err)
	if se.ExitCode != 7 || len(se.Stderr) != 1 || se.Stderr[0] != "retsu: something went wrong" {
		t.Fatalf("exit code %d, stderr %q; want 7 and the script's line", se.ExitCode, se.Stderr)
	}
}

func TestStartTimeout(t *testing.T) {
	bin := script(t, "echo 'retsu: still thinking' >&2\nexec sleep 30\n")
	began := time.Now()
	_, err := retsutest.Launch(retsutest.WithBinary(bin), retsutest.WithStartTimeout(300*time.Millisecond))
	took := time.Since(began)
	se := startError(t, err)
	if !strings.Contains(se.Cause, "no ready line within 300ms") || se.ExitCode != -1 ||
		len(se.Stderr) != 1 || se.Stderr[0] != "retsu: still thinking" {
		t.Fatalf("error: %v", err)
	}
	if took > 3*time.Second {
		t.Fatalf("a 300ms start timeout took %v", took)
	}
}

func TestAdminErrorCarriesTheServersText(t *testing.T) {
	srv := retsutest.Start(t)
	_, err := srv.Peek("nope")
	var ae *retsutest.AdminError
	if !errors.As(err, &ae) || ae.Status != 404 || ae.Code != "NotFound" ||
		ae.Message != "no queue us-east-1/000000000000/nope" {
		t.Fatalf("peek of a missing queue: %v", err)
	}
	if _, err := srv.History("not-an-id"); !isAdmin(err, 400) || !strings.Contains(err.Error(), "is not a message id") {
		t.Fatalf("history of a bad id: %v", err)
	}
}
