module github.com/licensing-platform/licensing/sdks/go

go 1.19
