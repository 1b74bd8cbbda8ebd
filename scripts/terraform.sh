#!/usr/bin/env bash
# Prints the path of a terraform binary for acceptance tests and doc generation, and nothing
# else on stdout (messages go to stderr), so callers can write TF_ACC_TERRAFORM_PATH=$(scripts/terraform.sh).
#
# In order: `terraform` on PATH; <repo>/.tools/bin/terraform if an earlier run built it; else build
# it from source through the Go module proxy (no releases.hashicorp.com download, ~3 min on 2 cores).
#
# Environment:
#   TERRAFORM_VERSION       version built from source (v1.5.7: the last MPL-licensed release)
#   TERRAFORM_GOBIN         directory the built binary goes to (<repo>/.tools/bin)
#   TERRAFORM_FORCE_BUILD=1 ignore PATH and an earlier build; build into TERRAFORM_GOBIN
set -euo pipefail

version=${TERRAFORM_VERSION:-v1.5.7}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gobin=${TERRAFORM_GOBIN:-$repo/.tools/bin}
force=${TERRAFORM_FORCE_BUILD:-}

log() { echo "terraform.sh: $*" >&2; }

if [ -z "$force" ]; then
	if found=$(command -v terraform 2>/dev/null); then
		echo "$found"
		exit 0
	fi
	if [ -x "$gobin/terraform" ]; then
		echo "$gobin/terraform"
		exit 0
	fi
fi

command -v go >/dev/null 2>&1 || {
	log "no terraform on PATH and no go to build one; install terraform or Go (/usr/local/go/bin)"
	exit 1
}

mkdir -p "$gobin"
log "building github.com/hashicorp/terraform@$version into $gobin (takes a few minutes)"
started=$SECONDS
# `go install pkg@version` ignores the repository's go.mod; its output goes to stderr like every message.
GOBIN="$gobin" CGO_ENABLED=0 go install "github.com/hashicorp/terraform@$version" >&2
log "built $gobin/terraform in $((SECONDS - started))s"
env -u TF_CLI_CONFIG_FILE CHECKPOINT_DISABLE=1 "$gobin/terraform" version >&2 || {
	log "the built binary does not run"
	exit 1
}
echo "$gobin/terraform"
