#!/usr/bin/env bash
# `make test-modules`: `terraform test` of every module under examples/modules/ that has tests
# (*.tftest.hcl in the module or its tests/ directory), with the provider built from this checkout,
# against the local broker; then `tofu test` of each when TOFU names an OpenTofu binary.
#
# The provider is installed as a release would be, not through dev_overrides (with which `init`, that
# a module's tests need for their helper modules, fails): it is built at the CHANGELOG's version into an
# unpacked filesystem mirror (.tools/module-tests/mirror/<host>/delayqueue/rabbitmq/<version>/<os>_<arch>/),
# under registry.terraform.io for Terraform and registry.opentofu.org for OpenTofu, and a CLI
# configuration with that mirror alone makes `init` take it from there, so the modules' `version =
# "~> 0.1"` constraints hold. Each module runs in a copy under .tools/module-tests/, so the tree stays
# clean.
#
#   scripts/module-tests.sh                                        every module with tests
#   scripts/module-tests.sh examples/modules/delay-with-retries    only these
#
# Environment:
#   TERRAFORM   the CLI to run (default: scripts/terraform.sh's)
#   TOFU        an OpenTofu binary to run the tests with too; unset or empty: Terraform only
#   RABBITMQ_ENDPOINT, RABBITMQ_USERNAME, RABBITMQ_PASSWORD: the broker of the tests' apply runs (the
#   local broker's by default: http://127.0.0.1:RABBITMQ_MANAGEMENT_PORT, 15672 unless set; guest)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
export RABBITMQ_ENDPOINT=${RABBITMQ_ENDPOINT:-http://127.0.0.1:${RABBITMQ_MANAGEMENT_PORT:-15672}}
export RABBITMQ_USERNAME=${RABBITMQ_USERNAME:-guest}
export RABBITMQ_PASSWORD=${RABBITMQ_PASSWORD:-guest}
export CHECKPOINT_DISABLE=1
unset TF_ACC_TERRAFORM_VERSION TF_CLI_CONFIG_FILE

started=$SECONDS
step() { echo "==> [module-tests +$((SECONDS - started))s] $*"; }

terraform=${TERRAFORM:-$(scripts/terraform.sh)}
tofu=${TOFU:-}
work=$repo/.tools/module-tests
rm -rf "$work"
mkdir -p "$work"

version=$(sed -n 's/^## \([0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\)[[:space:]].*$/\1/p' CHANGELOG.md | head -n 1)
[ -n "$version" ] || {
	echo "module-tests.sh: CHANGELOG.md has no heading '## X.Y.Z (…)' to take the version from" >&2
	exit 1
}
platform=$(go env GOOS)_$(go env GOARCH)
mirror=$work/mirror
step "building the provider v$version into the mirror (${mirror#"$repo"/})"
binary=$mirror/registry.terraform.io/delayqueue/rabbitmq/$version/$platform/terraform-provider-rabbitmq_v$version
go build -trimpath -ldflags "-X main.version=$version" -o "$binary" .
mkdir -p "$mirror/registry.opentofu.org/delayqueue/rabbitmq/$version"
cp -r "$(dirname "$binary")" "$mirror/registry.opentofu.org/delayqueue/rabbitmq/$version/"
cat >"$work/mirror.tfrc" <<HCL
provider_installation {
  filesystem_mirror {
    path = "$mirror"
  }
}
HCL
export TF_CLI_CONFIG_FILE=$work/mirror.tfrc

if [ "$#" -gt 0 ]; then
	modules=("${@%/}")
else
	mapfile -t modules < <(find examples/modules -name '*.tftest.hcl' 2>/dev/null |
		sed 's|/tests/[^/]*$||; s|/[^/]*\.tftest\.hcl$||' | sort -u)
fi
[ "${#modules[@]}" -gt 0 ] || {
	echo "module-tests.sh: no module under examples/modules has tests" >&2
	exit 1
}

# test_module CLI NAME MODULE: init and test a copy of MODULE with CLI.
test_module() {
	local cli=$1 name=$2 module=$3 dir status=0
	dir=$work/$name/${module//\//_}
	mkdir -p "$(dirname "$dir")"
	cp -r "$module" "$dir"
	step "$module: $name init ($("$cli" version | head -n 1))"
	"$cli" -chdir="$dir" init -input=false -no-color >"$dir/init.txt" 2>&1 || {
		cat "$dir/init.txt" >&2
		return 1
	}
	grep -E "Installed|Installing" "$dir/init.txt" | sed 's/^/    /'
	step "$module: $name test"
	"$cli" -chdir="$dir" test -no-color 2>&1 | tee "$dir/test.txt" || status=$?
	# A test that skipped its runs is no pass.
	if [ "$status" -eq 0 ] && ! grep -qE '^Success! [0-9]+ passed, 0 failed\.$' "$dir/test.txt"; then
		echo "module-tests.sh: $name test of $module did not pass every run" >&2
		status=1
	fi
	return "$status"
}

passed=() failed=()
for module in "${modules[@]}"; do
	for cli in terraform tofu; do
		case $cli in
		terraform) bin=$terraform ;;
		tofu) bin=$tofu ;;
		esac
		if [ -z "$bin" ]; then
			step "$module: tofu test SKIPPED (TOFU is not set)"
			continue
		fi
		if test_module "$bin" "$cli" "$module"; then passed+=("$cli:$module"); else failed+=("$cli:$module"); fi
	done
done
echo "module tests: ${#passed[@]} passed, ${#failed[@]} failed in $((SECONDS - started))s"
[ "${#failed[@]}" -eq 0 ] || {
	printf '  failed: %s\n' "${failed[@]}"
	exit 1
}
