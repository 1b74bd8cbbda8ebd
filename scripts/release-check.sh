#!/usr/bin/env bash
# `make release-check`: builds the release as .github/workflows/release.yml would, for this machine's
# platform and without the release's signing key, and installs it the way users will, through `init`:
#
#   1. `goreleaser check` of .goreleaser.yml;
#   2. `goreleaser release --snapshot --clean --skip=sign` with .goreleaser.yml, changed in two
#      things only (written to .tools/release/goreleaser.yml): the builds' targets are this machine's
#      platform alone, and the snapshot's version is the CHANGELOG's first version (0.1.0), not
#      goreleaser's "<last tag>-SNAPSHOT-<commit>", which is a pre-release that no `~> 0.1` matches.
#      dist/ then holds what a release publishes but the signature: the zip, and
#      <project>_<version>_SHA256SUMS, whose lines name the zip and <project>_<version>_manifest.json
#      (terraform-registry-manifest.json, which the release uploads under that name);
#   3. lays the zip out as a provider mirror in the packed layout
#      (.tools/release/mirror/<host>/delayqueue/rabbitmq/<zip>), under registry.terraform.io for
#      Terraform and registry.opentofu.org for OpenTofu, which is where each reads an unqualified
#      `source = "delayqueue/rabbitmq"`;
#   4. for each CLI: `init` of a configuration that requires `delayqueue/rabbitmq` `~> 0.1`, with a CLI
#      configuration whose provider_installation has the filesystem mirror alone (no `direct`, so
#      nothing can come from elsewhere), then `plan` of a rabbitmq_delay_topology data source (no
#      broker), whose output must show the plan the installed provider made;
#   5. `providers lock -fs-mirror` for this platform, and the lock file `init` wrote, must hold the
#      h1: hash of the zip whose SHA-256 SHA256SUMS lists (a mirror's package is unsigned: no zh:);
#   6. as the Registry serves a release: a provider registry on 127.0.0.1 (static files over HTTPS)
#      serves the zip and SHA256SUMS, signed with a key made for the run; `init` through it installs
#      the release as signed, and `providers lock` must lock zh: hashes that are exactly SHA256SUMS's.
#
# Needs gpg, openssl, python3 (the registry's HTTPS server), jq and unzip besides the CLIs.
#
# Environment:
#   GORELEASER  the goreleaser binary (the GNUmakefile's, v2.16.0)
#   TERRAFORM   the terraform binary (default: scripts/terraform.sh's)
#   TOFU        the OpenTofu binary (the GNUmakefile's); unset or empty skips OpenTofu, with a line
#               saying so
#   NICE        a prefix for goreleaser (make's NICE)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
export CHECKPOINT_DISABLE=1
unset TF_CLI_CONFIG_FILE TF_ACC_TERRAFORM_VERSION

started=$SECONDS
step() { echo "==> [release-check +$((SECONDS - started))s] $*"; }
fail() {
	echo "release-check: $*" >&2
	exit 1
}

for tool in gpg openssl python3 jq unzip sha256sum; do
	command -v "$tool" >/dev/null 2>&1 || fail "needs $tool, which is not on PATH"
done
goreleaser=${GORELEASER:?GORELEASER names the goreleaser binary (make release-check sets it)}
terraform=${TERRAFORM:-$(scripts/terraform.sh)}
tofu=${TOFU:-}
read -r -a nice <<<"${NICE:-}"

project=terraform-provider-rabbitmq
namespace=delayqueue
type=rabbitmq
work=$repo/.tools/release
rm -rf "$work"
mkdir -p "$work"

# The version the release will have: the CHANGELOG's first heading, "## X.Y.Z (Unreleased)".
version=$(sed -n 's/^## \([0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\)[[:space:]].*$/\1/p' CHANGELOG.md | head -n 1)
[ -n "$version" ] || fail "CHANGELOG.md has no heading '## X.Y.Z (…)' to take the version from"
os=$(go env GOOS)
arch=$(go env GOARCH)
# goreleaser v2 names a target with the architecture's default level.
case $arch in
amd64) target=${os}_${arch}_v1 ;;
arm64) target=${os}_${arch}_v8.0 ;;
386) target=${os}_${arch}_sse2 ;;
arm) target=${os}_${arch}_6 ;;
*) target=${os}_${arch} ;;
esac

step "goreleaser check ($("$goreleaser" --version 2>/dev/null | sed -n 's/^GitVersion:[[:space:]]*//p'))"
"$goreleaser" check

# .goreleaser.yml with `targets` in its one build (goreleaser then ignores goos, goarch and ignore)
# and a snapshot version. The awk fails unless it found the one build it rewrites.
config=$work/goreleaser.yml
awk -v target="$target" '
	/^builds:$/ { print; in_builds = 1; next }
	in_builds && /^  - / { sub(/^  - /, "    "); print "  - targets: [\"" target "\"]"; print; in_builds = 0; done++; next }
	{ print }
	END { if (done != 1) exit 1 }
' .goreleaser.yml >"$config" || fail ".goreleaser.yml: found no build under 'builds:' to limit to $target"
grep -q '^snapshot:' "$config" && fail ".goreleaser.yml has a snapshot section; this script writes its own"
printf '\n# release-check.sh: the version the release will have (CHANGELOG.md), not a pre-release.\nsnapshot:\n  version_template: "%s"\n' \
	"$version" >>"$config"

step "goreleaser release --snapshot --clean --skip=sign, for $target, version $version"
"${nice[@]}" "$goreleaser" release --config "$config" --snapshot --clean --skip=sign >"$work/goreleaser.log" 2>&1 || {
	cat "$work/goreleaser.log" >&2
	fail "goreleaser release failed"
}

zip=${project}_${version}_${os}_${arch}.zip
sums=dist/${project}_${version}_SHA256SUMS
manifest=${project}_${version}_manifest.json
for file in "dist/$zip" "$sums"; do
	[ -f "$file" ] || fail "goreleaser wrote no $file (dist/: $(ls dist | tr '\n' ' '))"
done
zips=$(find dist -maxdepth 1 -name '*.zip' | wc -l)
[ "$zips" -eq 1 ] || fail "dist/ holds $zips zip archives, not this platform's one"
listing=$(unzip -l "dist/$zip")
grep -q " ${project}_v${version}\$" <<<"$listing" || fail "dist/$zip holds no ${project}_v${version}"
sum=$(awk -v zip="$zip" '$2 == zip { print $1 }' "$sums")
[ -n "$sum" ] || fail "$sums has no line for $zip"
manifest_sum=$(awk -v name="$manifest" '$2 == name { print $1 }' "$sums")
[ "$manifest_sum" = "$(sha256sum terraform-registry-manifest.json | cut -d' ' -f1)" ] ||
	fail "$sums has no line for $manifest with terraform-registry-manifest.json's hash"
step "dist/: $zip; $(basename "$sums"): $zip $sum, $manifest $manifest_sum"

mirror=$work/mirror
for host in registry.terraform.io registry.opentofu.org; do
	mkdir -p "$mirror/$host/$namespace/$type"
	cp "dist/$zip" "$mirror/$host/$namespace/$type/"
done
cat >"$work/mirror.tfrc" <<HCL
# The release's archive and nothing else: no direct installation.
provider_installation {
  filesystem_mirror {
    path = "$mirror"
  }
}
HCL

# A configuration as a user writes it; the data source plans without a broker, and the provider block
# names none.
config_dir=$work/config
mkdir -p "$config_dir"
cat >"$config_dir/main.tf" <<HCL
terraform {
  required_providers {
    rabbitmq = {
      source  = "$namespace/$type"
      version = "~> 0.1"
    }
  }
}

provider "rabbitmq" {}

data "rabbitmq_delay_topology" "release_check" {
  name      = "release-check"
  max_delay = "1h"
}

output "levels" {
  value = data.rabbitmq_delay_topology.release_check.levels
}
HCL

# What a lock file can hold for this release. A filesystem mirror's package is unsigned, so Terraform
# and OpenTofu lock only its h1: hash (the zip's files: golang.org/x/mod/sumdb/dirhash's Hash1, which
# is computed here from the zip apart from them), never zh: (the zip's SHA-256, as SHA256SUMS lists
# it), which they take from a registry's signed SHA256SUMS alone. So the chain is checked link by
# link: SHA256SUMS -> the zip's SHA-256 (above) -> the zip's h1: (here) -> the lock files (below).
unpacked=$work/unpacked
mkdir -p "$unpacked"
unzip -q "dist/$zip" -d "$unpacked"
[ "$(sha256sum "$mirror/registry.terraform.io/$namespace/$type/$zip" | cut -d' ' -f1)" = "$sum" ] ||
	fail "the mirror's $zip does not have SHA256SUMS's hash $sum"
h1=$(cd "$unpacked" && find . -type f | sed 's|^\./||' | LC_ALL=C sort | while read -r file; do
	printf '%s  %s\n' "$(sha256sum "$file" | cut -d' ' -f1)" "$file"
done | openssl dgst -sha256 -binary | base64)

# lock_hashes FILE: the hashes of the lock file's one provider, space-separated.
lock_hashes() {
	sed -n 's/^[[:space:]]*"\([a-z0-9]*:[^"]*\)",*$/\1/p' "$1" | tr '\n' ' ' | sed 's/ $//'
}

# install_and_plan NAME CLI HOST: init from the mirror, plan, lock; every check against the release.
install_and_plan() {
	local name=$1 cli=$2 host=$3 dir=$work/$1 lock_dir=$work/$1-lock out
	cp -r "$config_dir" "$dir"
	step "$name: $("$cli" version | head -n 1)"

	out=$(TF_CLI_CONFIG_FILE=$work/mirror.tfrc "$cli" -chdir="$dir" init -input=false -no-color 2>&1) || {
		echo "$out" >&2
		fail "$name init from the mirror failed"
	}
	echo "$out" | grep -E "Installing|Installed|Finding" | sed 's/^/    /'
	grep -q "Installed $host/$namespace/$type v$version\|Installed $namespace/$type v$version" <<<"$out" ||
		fail "$name init installed no $namespace/$type v$version"
	local installed=$dir/.terraform/providers/$host/$namespace/$type/$version/${os}_${arch}/${project}_v${version}
	[ -x "$installed" ] || fail "$name init put no ${project}_v${version} in .terraform/providers/$host/…"

	out=$(TF_CLI_CONFIG_FILE=$work/mirror.tfrc "$cli" -chdir="$dir" plan -input=false -no-color 2>&1) || {
		echo "$out" >&2
		fail "$name plan failed"
	}
	# 1h at a 1 s resolution in radix 2: 12 levels (2^12 - 1 = 4095 s).
	grep -q '+ levels = 12' <<<"$out" || {
		echo "$out" >&2
		fail "$name plan shows no output levels = 12"
	}
	step "$name: plan read data.rabbitmq_delay_topology.release_check (levels = 12) with the installed provider"

	# The lock's hash for this platform, as `providers lock` computes it from the mirror's zip.
	mkdir -p "$lock_dir"
	cp "$config_dir/main.tf" "$lock_dir/"
	out=$("$cli" -chdir="$lock_dir" providers lock -fs-mirror="$mirror" -platform="${os}_${arch}" -no-color 2>&1) || {
		echo "$out" >&2
		fail "$name providers lock -fs-mirror failed"
	}
	local locked
	locked=$(lock_hashes "$lock_dir/.terraform.lock.hcl")
	[ "$locked" = "h1:$h1" ] || {
		cat "$lock_dir/.terraform.lock.hcl" >&2
		fail "$name providers lock gives ${locked:-no hash}, not h1:$h1, the hash of $zip, whose SHA256SUMS line is $sum"
	}
	[ "$(lock_hashes "$dir/.terraform.lock.hcl")" = "h1:$h1" ] || {
		cat "$dir/.terraform.lock.hcl" >&2
		fail "the lock file $name init wrote holds other hashes than h1:$h1"
	}
	step "$name: providers lock -fs-mirror and init lock h1:$h1, the hash of the zip SHA256SUMS lists as $sum"
}

# The Registry's way, for the zh: hash: a provider registry on 127.0.0.1 (the provider registry
# protocol, static files over HTTPS with a certificate made here) serves dist/'s zip and SHA256SUMS,
# signed here with a key of this run's as release.yml signs them with the namespace's (the same gpg
# arguments as .goreleaser.yml's), and a CLI configuration's host blocks send registry.terraform.io and
# registry.opentofu.org's provider service there. A signed SHA256SUMS is what makes Terraform and
# OpenTofu lock zh: hashes: `providers lock` must lock exactly SHA256SUMS's hash of the zip.
registry=$work/registry
gnupg=$work/gnupg
mkdir -p "$registry/files" && mkdir -m 700 "$gnupg"
gpg_() { GNUPGHOME=$gnupg gpg --batch --quiet "$@"; }
gpg_ --passphrase '' --quick-gen-key 'release-check <release-check@localhost>' rsa2048 sign never 2>/dev/null
key_id=$(gpg_ --list-keys --with-colons | awk -F: '$1 == "pub" { print $5; exit }')
cp "dist/$zip" "$sums" "$registry/files/"
gpg_ --local-user "$key_id" --output "$registry/files/$(basename "$sums").sig" --detach-sign "$sums"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
	-keyout "$work/registry-key.pem" -out "$work/registry-cert.pem" 2>/dev/null
python3 - "$registry" "$work/registry-cert.pem" "$work/registry-key.pem" "$work/registry.port" <<'PY' 2>"$work/registry.log" &
import functools, http.server, ssl, sys
root, cert, key, port_file = sys.argv[1:]
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(http.server.SimpleHTTPRequestHandler, directory=root))
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
server.socket = context.wrap_socket(server.socket, server_side=True)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os; os.rename(port_file + ".tmp", port_file)
server.serve_forever()
PY
registry_pid=$!
trap 'kill "$registry_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do [ -s "$work/registry.port" ] && break; sleep 0.1; done
[ -s "$work/registry.port" ] || fail "the registry on 127.0.0.1 did not start: $(cat "$work/registry.log")"
base=https://127.0.0.1:$(cat "$work/registry.port")
api=$registry/v1/providers/$namespace/$type
mkdir -p "$api/$version/download/$os"
jq -n --arg v "$version" --arg os "$os" --arg arch "$arch" \
	'{versions: [{version: $v, protocols: ["6.0"], platforms: [{os: $os, arch: $arch}]}]}' >"$api/versions"
jq -n --arg os "$os" --arg arch "$arch" --arg zip "$zip" --arg sum "$sum" --arg files "$base/files" \
	--arg sums "$(basename "$sums")" --arg key_id "$key_id" --arg armor "$(gpg_ --armor --export "$key_id")" \
	'{protocols: ["6.0"], os: $os, arch: $arch, filename: $zip, download_url: "\($files)/\($zip)",
	  shasums_url: "\($files)/\($sums)", shasums_signature_url: "\($files)/\($sums).sig", shasum: $sum,
	  signing_keys: {gpg_public_keys: [{key_id: $key_id, ascii_armor: $armor}]}}' >"$api/$version/download/$os/$arch"
cat >"$work/registry.tfrc" <<HCL
# Both registries' provider service is the one on 127.0.0.1; nothing else is reachable.
host "registry.terraform.io" {
  services = {
    "providers.v1" = "$base/v1/providers/"
  }
}
host "registry.opentofu.org" {
  services = {
    "providers.v1" = "$base/v1/providers/"
  }
}
HCL

# lock_from_registry NAME CLI: init and providers lock through the registry; both lock zh:$sum.
lock_from_registry() {
	local name=$1 cli=$2 dir=$work/$1-registry out
	cp -r "$config_dir" "$dir"
	out=$(SSL_CERT_FILE=$work/registry-cert.pem TF_CLI_CONFIG_FILE=$work/registry.tfrc \
		"$cli" -chdir="$dir" init -input=false -no-color 2>&1) || {
		echo "$out" >&2
		fail "$name init from the registry on 127.0.0.1 failed"
	}
	echo "$out" | grep -E "Installing|Installed" | sed 's/^/    /'
	grep -q "Installed .*$namespace/$type v$version (.*signed" <<<"$out" ||
		fail "$name init did not install $namespace/$type v$version as signed"
	rm "$dir/.terraform.lock.hcl"
	out=$(SSL_CERT_FILE=$work/registry-cert.pem TF_CLI_CONFIG_FILE=$work/registry.tfrc \
		"$cli" -chdir="$dir" providers lock -platform="${os}_${arch}" -no-color 2>&1) || {
		echo "$out" >&2
		fail "$name providers lock from the registry on 127.0.0.1 failed"
	}
	# The CLIs lock a zh: hash for every line of the signed SHA256SUMS (the manifest's too, as with the
	# Registry's), and the h1: hash of the zip they installed.
	local zh want
	zh=$(sed -n 's/^[[:space:]]*"zh:\([0-9a-f]*\)",*$/\1/p' "$dir/.terraform.lock.hcl" | sort | tr '\n' ' ')
	want=$(cut -d' ' -f1 "$sums" | sort -u | tr '\n' ' ')
	[ "$zh" = "$want" ] || {
		cat "$dir/.terraform.lock.hcl" >&2
		fail "$name providers lock gives zh: ${zh:-(none)}, not SHA256SUMS's hashes $want"
	}
	grep -q "\"zh:$sum\"" "$dir/.terraform.lock.hcl" || fail "$name providers lock has no zh:$sum for $zip"
	grep -q "\"h1:$h1\"" "$dir/.terraform.lock.hcl" || fail "$name providers lock from the registry has no h1:$h1"
	step "$name: providers lock from the registry gives zh: exactly SHA256SUMS's hashes (${zip}: zh:$sum), and h1:$h1"
}

install_and_plan terraform "$terraform" registry.terraform.io
lock_from_registry terraform "$terraform"
if [ -n "$tofu" ]; then
	install_and_plan tofu "$tofu" registry.opentofu.org
	lock_from_registry tofu "$tofu"
else
	step "OpenTofu SKIPPED: TOFU is not set"
fi
step "release-check: passed ($zip v$version, installed from the mirror and the registry, planned, hashes locked)"
