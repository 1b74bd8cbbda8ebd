#!/usr/bin/env bash
# Installs what the publishing guide's publishers (examples/publishers) need, for `make publishers`:
# Python 3 with pika and the RabbitMQ Java client from Debian's packages (a JDK and Node.js too, when
# absent), and amqplib from npm into examples/publishers/node/node_modules. Idempotent: with
# everything installed it checks and returns in a second. Prints, last, the environment the
# publishers' test reads: PUBLISHERS_PYTHON and PUBLISHERS_JAVA_CLASSPATH.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

sudo_if_needed() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Debian's packages: each package is installed only when dpkg does not have it.
packages=(python3-pika librabbitmq-client-java)
command -v javac >/dev/null || packages+=(default-jdk-headless)
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
missing=()
for package in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "publishers-setup.sh: installing ${missing[*]}" >&2
	# apt's progress goes to stderr: stdout is the environment the test reads.
	{ sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" ||
		{ sudo_if_needed apt-get update -q && sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"; }; } >&2
fi

# amqplib, at the version examples/publishers/node/package.json names.
node_dir=$repo/examples/publishers/node
if [ ! -f "$node_dir/node_modules/amqplib/package.json" ]; then
	echo "publishers-setup.sh: npm install (amqplib) in examples/publishers/node" >&2
	(cd "$node_dir" && npm install --no-audit --no-fund --loglevel=error >&2)
fi

# Debian's python3, whose dist-packages hold python3-pika (a python3 earlier on PATH may not see it).
python=/usr/bin/python3
"$python" -c 'import pika' || { echo "publishers-setup.sh: $python cannot import pika" >&2; exit 1; }
classpath=
for jar in /usr/share/java/amqp-client.jar /usr/share/java/slf4j-api.jar; do
	[ -f "$jar" ] || { echo "publishers-setup.sh: $jar is missing" >&2; exit 1; }
	classpath=$classpath${classpath:+:}$jar
done
echo "PUBLISHERS_PYTHON=$python"
echo "PUBLISHERS_JAVA_CLASSPATH=$classpath"
