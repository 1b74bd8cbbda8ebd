#!/usr/bin/env bash
# Builds the provider from this checkout and writes a Terraform/OpenTofu CLI configuration whose
# dev_overrides make `delayqueue/rabbitmq` run that binary: no registry, no `init` needed for it.
# Prints the configuration's path and nothing else on stdout, so callers can write
#   export TF_CLI_CONFIG_FILE=$(scripts/dev-overrides.sh)
# Terraform then warns on every command that dev_overrides are in effect; that is expected.
#
# Used by scripts/demo.sh (make demo), scripts/examples.sh (make examples) and
# benchmarks/cmd/benchcontrolplane (make bench-control-plane).
# Environment: DEV_OVERRIDES_DIR, where the binary and the configuration go (<repo>/.tools).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tools=${DEV_OVERRIDES_DIR:-$repo/.tools}
provider_dir=$tools/provider
cli_config=$tools/dev-overrides.tfrc

mkdir -p "$provider_dir"
echo "dev-overrides.sh: building the provider into ${provider_dir#"$repo"/}" >&2
(cd "$repo" && go build -o "$provider_dir/terraform-provider-rabbitmq" .)

# `direct {}` keeps every other provider's usual installation.
cat >"$cli_config" <<HCL
provider_installation {
  dev_overrides {
    "delayqueue/rabbitmq" = "$provider_dir"
  }
  direct {}
}
HCL
echo "$cli_config"
