module retsu.dev/compat/sdkv1

go 1.22

// v1.55.8: the last release of the SDK (AWS JSON 1.0).
require (
	github.com/aws/aws-sdk-go v1.55.8
	retsu.dev/compat/harness v0.0.0
)

require github.com/jmespath/go-jmespath v0.4.0 // indirect

replace retsu.dev/compat/harness => ../harness
