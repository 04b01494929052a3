// Package harness is the part the Go compatibility suites share: the
// scenario list and runner, the results JSON of compat/run.sh's contract,
// assertions, and the byte-exact MD5s of spec section 4.3 (checked here,
// independently of the SDK's own validation).
package harness

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

// Scenarios in report order; the keys are shared with every suite.
var Scenarios = []string{
	"queue_lifecycle", "list_queues_pagination", "send_receive_delete_attributes",
	"batches_partial_failure", "visibility_change_release", "delay", "long_polling",
	"fifo_order_group_lock_dedup", "dead_letter_and_move_task", "tags", "errors_typed",
}

// SnsScenarios are the SNS scenario keys (an SNS results file has "service": "sns").
var SnsScenarios = []string{
	"sns_topic_lifecycle", "sns_fanout_envelope", "sns_raw_and_filter", "sns_fifo", "sns_errors",
}

// Trace is an AWSTraceHeader value and TraceMD5 its MD5OfMessageSystemAttributes.
const (
	Trace    = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	TraceMD5 = "5ae4d5d7636402d80f4eb6d213245a88"
)

type failure struct{ msg string }

// NA marks a scenario the client cannot express.
type NA struct{ Reason string }

// Fail aborts the running scenario with a message.
func Fail(format string, args ...any) { panic(failure{fmt.Sprintf(format, args...)}) }

// Check fails the scenario unless cond holds.
func Check(cond bool, format string, args ...any) {
	if !cond {
		Fail(format, args...)
	}
}

// Eq fails unless got and want print the same.
func Eq(got, want any, what string) {
	g, w := fmt.Sprintf("%#v", got), fmt.Sprintf("%#v", want)
	if g != w {
		Fail("%s: expected %s, got %s", what, w, g)
	}
}

// Must fails on an unexpected error from the client.
func Must(err error, what string) {
	if err != nil {
		Fail("%s: unexpected error: %v", what, err)
	}
}

// Attr is one message attribute, for the MD5.
type Attr struct {
	DataType string
	String   *string
	Binary   []byte
}

// MD5Hex is the hex MD5 of s.
func MD5Hex(s string) string { h := md5.Sum([]byte(s)); return hex.EncodeToString(h[:]) }

// MD5OfAttributes is MD5OfMessageAttributes as spec section 4.3 defines it.
func MD5OfAttributes(attrs map[string]Attr) string {
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	h := md5.New()
	put := func(b []byte) {
		var l [4]byte
		binary.BigEndian.PutUint32(l[:], uint32(len(b)))
		h.Write(l[:])
		h.Write(b)
	}
	for _, n := range names {
		a := attrs[n]
		put([]byte(n))
		put([]byte(a.DataType))
		if a.String != nil {
			h.Write([]byte{1})
			put([]byte(*a.String))
		} else {
			h.Write([]byte{2})
			put(a.Binary)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func init() {
	bar := "Bar"
	if MD5OfAttributes(map[string]Attr{"Foo": {DataType: "String", String: &bar}}) != "ae7155c6026991b6d54b11589678bf9c" {
		panic("MD5OfAttributes does not match the spec's vector")
	}
}

var counter int
var runID = fmt.Sprintf("%x", time.Now().UnixNano()%0xffffff)

// Name is a fresh queue name.
func Name(stem string) string {
	counter++
	return fmt.Sprintf("go-%s-%s-%d", stem, runID, counter)
}

// Result is one scenario's verdict.
type Result struct {
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// Run runs every scenario (each isolated: a failure or panic is recorded and
// the next one runs), then writes the results JSON to out.
func Run(client, version, protocol string, extra map[string]any, out string, funcs map[string]func() any, cleanup func()) int {
	return RunScenarios(Scenarios, "", client, version, protocol, extra, out, funcs, cleanup)
}

// RunScenarios is Run for the scenario keys names of service ("" for SQS:
// no "service" field in the results).
func RunScenarios(names []string, service, client, version, protocol string, extra map[string]any, out string,
	funcs map[string]func() any, cleanup func()) int {
	results := map[string]Result{}
	failed := 0
	for _, name := range names {
		start := time.Now()
		fn, ok := funcs[name]
		var res Result
		if !ok {
			res = Result{"fail", "scenario not implemented"}
		} else {
			res = runOne(fn)
		}
		if cleanup != nil {
			func() { defer func() { recover() }(); cleanup() }()
		}
		if res.Status == "fail" {
			failed++
		}
		fmt.Printf("  %-34s %-5s %5.1fs  %s\n", name, strings.ToUpper(res.Status), time.Since(start).Seconds(),
			map[bool]string{true: "", false: res.Detail}[res.Status == "pass"])
		results[name] = res
	}
	doc := map[string]any{"client": client, "version": version, "protocol": protocol, "results": results, "extra": extra}
	if service != "" {
		doc["service"] = service
	}
	data, _ := json.MarshalIndent(doc, "", "  ")
	if err := os.WriteFile(out, append(data, '\n'), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Printf("%s %s (%s): %d passed, %d failed\n", client, version, protocol, len(results)-failed, failed)
	if failed > 0 {
		return 1
	}
	return 0
}

func runOne(fn func() any) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			if f, ok := r.(failure); ok {
				res = Result{"fail", f.msg}
			} else {
				res = Result{"fail", fmt.Sprintf("panic: %v", r)}
			}
		}
	}()
	switch v := fn().(type) {
	case NA:
		return Result{"n/a", v.Reason}
	case string:
		return Result{"pass", v}
	default:
		return Result{"pass", ""}
	}
}

// Within polls fn until it returns true or d has passed.
func Within(d time.Duration, fn func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if fn() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}
