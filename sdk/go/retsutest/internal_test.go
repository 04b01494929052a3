package retsutest

import (
	"strings"
	"testing"
)

func TestFlagValue(t *testing.T) {
	args := []string{"--region", "eu-west-1", "--account-id=111111111111", "--region=ap-south-1"}
	if got := flagValue(args, "--region", DefaultRegion); got != "ap-south-1" {
		t.Errorf("--region: %q, want the last one", got)
	}
	if got := flagValue(args, "--account-id", DefaultAccountID); got != "111111111111" {
		t.Errorf("--account-id: %q", got)
	}
	if got := flagValue(nil, "--region", DefaultRegion); got != DefaultRegion {
		t.Errorf("default: %q", got)
	}
	if !hasFlag([]string{"--port=9"}, "--port") || hasFlag([]string{"--portable"}, "--port") {
		t.Error("hasFlag")
	}
}

func TestEachLineKeepsTheStartOfLongLinesAndTheTailKeepsTheLast(t *testing.T) {
	long := strings.Repeat("x", 3*maxLineBytes)
	input := "one\r\n" + long + "\nthree"
	var got []string
	eachLine(strings.NewReader(input), func(l string) { got = append(got, l) })
	if len(got) != 3 || got[0] != "one" || got[2] != "three" ||
		!strings.HasPrefix(got[1], "xxx") || len(got[1]) > maxLineBytes+len("…") {
		t.Fatalf("lines: %d, %q / %d bytes / %q", len(got), got[0], len(got[1]), got[len(got)-1])
	}
	tl := &tail{max: 2}
	for _, l := range []string{"a", "b", "c"} {
		tl.add(l)
	}
	if l := tl.lines(); strings.Join(l, ",") != "b,c" {
		t.Fatalf("tail: %v", l)
	}
}

func TestFindBinaryUsesAnExplicitPathAsGiven(t *testing.T) {
	t.Setenv("RETSU_BIN", "/bin/sh")
	if _, err := FindBinary("/nonexistent/retsu"); err == nil || !strings.Contains(err.Error(), `WithBinary("/nonexistent/retsu"): no such file`) {
		t.Fatalf("explicit missing binary: %v", err)
	}
	if got, err := FindBinary(""); err != nil || got != "/bin/sh" {
		t.Fatalf("RETSU_BIN: %q, %v", got, err)
	}
}
