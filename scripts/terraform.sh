#!/usr/bin/env bash
# Prints the path of a terraform binary for acceptance tests and doc generation, and nothing
# else on stdout (messages go to stderr), so callers can write TF_ACC_TERRAFORM_PATH=$(scripts/terraform.sh).
#
# In order: `terraform` on PATH; TERRAFORM_GOBIN/terraform if an earlier run (of any clone) built
# it; else build it from source through the Go module proxy (no releases.hashicorp.com download,
# ~3 min on 2 cores).
#
# Environment:
#   TERRAFORM_VERSION       version built from source (v1.5.7: the last MPL-licensed release)
#   TOOLS_CACHE             the tools built for this repository, per user, outside any checkout
#                           (${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-rabbitmq/tools;
#                           the GNUmakefile passes its own)
#   TERRAFORM_GOBIN         directory the built binary goes to (TOOLS_CACHE/terraform-VERSION, e.g.
#                           terraform-1.5.7, where `make testacc-terraform-oldest` looks too)
#   TERRAFORM_FORCE_BUILD=1 ignore PATH and an earlier build; build into TERRAFORM_GOBIN
set -euo pipefail

version=${TERRAFORM_VERSION:-v1.5.7}
cache=${TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-rabbitmq/tools}
gobin=${TERRAFORM_GOBIN:-$cache/terraform-${version#v}}
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
# Built beside, then renamed into place: a build running at the same time (another clone's) does
# not trip over this one, and the file is there only when complete.
tmp=$(mktemp -d "$gobin/.terraform.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# `go install pkg@version` ignores the repository's go.mod; its output goes to stderr like every message.
GOBIN="$tmp" CGO_ENABLED=0 go install "github.com/hashicorp/terraform@$version" >&2
mv "$tmp/terraform" "$gobin/terraform"
log "built $gobin/terraform in $((SECONDS - started))s"
env -u TF_CLI_CONFIG_FILE CHECKPOINT_DISABLE=1 "$gobin/terraform" version >&2 || {
	log "the built binary does not run"
	exit 1
}
echo "$gobin/terraform"
