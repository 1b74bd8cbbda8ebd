//go:build generate || tools

// Package tools pins the development tools this repository runs, in a module of their own so
// that their dependencies never reach the provider's go.mod. The import below is what makes
// `go mod tidy` record tfplugindocs in tools/go.mod. The build tags keep this file out of every
// build (`tools` is the customary tag for this pattern) except go generate's: `go generate`
// sets the `generate` tag, so `go generate ./...` in this directory finds the directives below.
package tools

import (
	_ "github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs"
)

// Format the examples that the documentation embeds. Needs `terraform` on PATH; `make generate`
// puts scripts/terraform.sh's binary there, so nothing is downloaded.
//go:generate terraform fmt -recursive ../examples/

// Render docs/ from the provider's schema, examples/ and templates/ (if any).
//go:generate go run github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs generate --provider-dir .. --provider-name rabbitmq
