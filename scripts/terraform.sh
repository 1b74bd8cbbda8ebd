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
#   TERRAFORM_SOURCE_REPO   a git repository of hashicorp/terraform that holds TERRAFORM_VERSION's tag:
#                           needed from v1.10 on (below)
#
# From v1.10 on, terraform's go.mod replaces nine modules nested in its repository (the remote-state
# backends and internal/legacy) by their directories, so `go install pkg@version` refuses it, and the
# module's zip leaves those directories out (a zip never holds a nested module). The proxy serves
# none of them at a release's commit (v1.13.3's, 9eaccdd, answers "not available"). So such a
# version is built from the proxy's module, checked against go.sum as always, in a copy of its own,
# with the nested modules' directories taken from the tag in TERRAFORM_SOURCE_REPO; every file the
# two share was compared equal for v1.13.3.
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

# build_with_nested_modules MODULE DIR builds a version whose go.mod replaces modules by directories
# of its repository (see above) into DIR, in a copy of the proxy's module completed from
# TERRAFORM_SOURCE_REPO.
build_with_nested_modules() {
	local module=$1 dirs build
	dirs=$(sed -n 's|^replace [^ ]* => \./\(.*\)$|\1|p' "$module/go.mod")
	[ -n "${TERRAFORM_SOURCE_REPO:-}" ] || {
		log "terraform $version replaces modules by directories of its repository, which the Go module proxy does not serve:"
		log "  $(echo $dirs)"
		log "set TERRAFORM_SOURCE_REPO to a git repository of hashicorp/terraform that holds the tag $version"
		return 1
	}
	build=$(mktemp -d "${TMPDIR:-/tmp}/terraform-$version-XXXXXX")
	trap 'chmod -R u+w "$build"; rm -rf "$build"' RETURN
	cp -R "$module/." "$build/" && chmod -R u+w "$build"
	# shellcheck disable=SC2086 # one directory per word
	git -C "$TERRAFORM_SOURCE_REPO" archive "refs/tags/$version" -- $dirs | tar -x -C "$build"
	# version.dev=no, as HashiCorp's release builds set it: the binary says v1.13.3, not v1.13.3-dev.
	(cd "$build" && CGO_ENABLED=0 go build -trimpath -ldflags "-X github.com/hashicorp/terraform/version.dev=no" \
		-o "$2/terraform" .) >&2
}

mkdir -p "$gobin"
log "building github.com/hashicorp/terraform@$version into $gobin (takes a few minutes)"
started=$SECONDS
# Built beside, then renamed into place: a build running at the same time (another clone's) does
# not trip over this one, and the file is there only when complete.
tmp=$(mktemp -d "$gobin/.terraform.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# `go install pkg@version` ignores the repository's go.mod; its output goes to stderr like every message.
module=$(cd / && go mod download -json "github.com/hashicorp/terraform@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if grep -q '^replace [^ ]* => \./' "$module/go.mod"; then
	build_with_nested_modules "$module" "$tmp"
else
	GOBIN="$tmp" CGO_ENABLED=0 go install "github.com/hashicorp/terraform@$version" >&2
fi
mv "$tmp/terraform" "$gobin/terraform"
log "built $gobin/terraform in $((SECONDS - started))s"
env -u TF_CLI_CONFIG_FILE CHECKPOINT_DISABLE=1 "$gobin/terraform" version >&2 || {
	log "the built binary does not run"
	exit 1
}
echo "$gobin/terraform"
