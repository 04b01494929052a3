module github.com/retsu-dev/retsu/sdk/go/retsutest

go 1.22
