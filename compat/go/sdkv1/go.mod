module retsu.dev/compat/sdkv1

go 1.22

// v1.46.7: a release from before the November 2023 JSON switch (query protocol).
require (
	github.com/aws/aws-sdk-go v1.46.7
	retsu.dev/compat/harness v0.0.0
)

require github.com/jmespath/go-jmespath v0.4.0 // indirect

replace retsu.dev/compat/harness => ../harness
