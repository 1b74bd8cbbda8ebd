module github.com/delayqueue/terraform-provider-rabbitmq/delaykey

// The lowest line the code needs: it ranges over integers, which Go 1.22 brought. No lower line
// builds, and any higher one would raise the go line of every module that requires this one;
// internal/delaykeycheck (in the provider's module) checks both. No requirements, ever: a
// publisher's `go get` must change nothing but this module's own line in its go.mod.
go 1.22
