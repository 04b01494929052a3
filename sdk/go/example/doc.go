// Package example is a sample suite: aws-sdk-go-v2 against a Retsu server
// started by retsutest. Its tests are in the _test.go files.
package example
