package example

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/retsu-dev/retsu/sdk/go/retsutest"
)

// TestHang is the body of TestOrphanLeavesNoServer's child: it starts a
// server, says so on stdout, and blocks until it is killed. Skipped
// unless run as that child.
func TestHang(t *testing.T) {
	marker := os.Getenv("RETSU_ORPHAN_DATA_DIR")
	if marker == "" {
		t.Skip("the child of TestOrphanLeavesNoServer")
	}
	srv := retsutest.Start(t, retsutest.WithDataDir(marker))
	fmt.Printf("serving pid=%d endpoint=%s\n", srv.PID(), srv.Endpoint)
	time.Sleep(time.Minute) // SIGKILLed long before this
	t.Fatal("the parent never killed this test process")
}

// retsuWith lists the pids of live retsu processes whose command line
// holds marker.
func retsuWith(marker string) []string {
	var pids []string
	entries, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, path := range entries {
		raw, err := os.ReadFile(path)
		if err != nil || len(raw) == 0 { // gone, or a zombie
			continue
		}
		argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if filepath.Base(argv[0]) != "retsu" {
			continue
		}
		for _, a := range argv[1:] {
			if a == marker {
				pids = append(pids, strings.Split(path, "/")[2])
				break
			}
		}
	}
	sort.Strings(pids)
	return pids
}

func TestOrphanLeavesNoServer(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("needs /proc")
	}
	marker := filepath.Join(t.TempDir(), fmt.Sprintf("orphan-%d-%d", os.Getpid(), time.Now().UnixNano()))
	// The child is this very test binary, running only TestHang.
	child := exec.Command(os.Args[0], "-test.run=^TestHang$", "-test.v", "-test.timeout=2m")
	child.Env = append(os.Environ(), "RETSU_ORPHAN_DATA_DIR="+marker)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })

	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var endpoint string
	deadline := time.After(30 * time.Second)
	for endpoint == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("the child test process ended before it served")
			}
			if strings.HasPrefix(line, "serving ") {
				endpoint = line[strings.Index(line, "endpoint=")+len("endpoint="):]
			}
		case <-deadline:
			t.Fatal("the child test process did not start a server within 30 s")
		}
	}
	go func() {
		for range lines { // drain the rest
		}
	}()

	// It serves, and it is the retsu we will look for.
	if _, err := clientFor(t, endpoint, retsutest.DefaultRegion).ListQueues(context.Background(), &sqs.ListQueuesInput{}); err != nil {
		t.Fatalf("the child's server does not answer: %v", err)
	}
	if pids := retsuWith(marker); len(pids) != 1 {
		t.Fatalf("retsu processes of this run before the kill: %v, want exactly one", pids)
	}

	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	child.Wait()
	var left []string
	for time.Since(killed) < 2*time.Second {
		if left = retsuWith(marker); len(left) == 0 {
			t.Logf("the server exited %v after its test process was SIGKILLed", time.Since(killed).Round(time.Millisecond))
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("2 s after the test process was SIGKILLed, retsu processes %v of this run remain", left)
}
