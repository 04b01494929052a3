module retsu.dev/compat/harness

go 1.21
