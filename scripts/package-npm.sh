#!/usr/bin/env bash
# Packs the npm distribution (docs/npm.md): the `mcp-cassette` launcher package and one
# `@mcp-cassette/<os>-<cpu>` package per binary, every tarball written by `npm pack` into
# target/npm/ (or --out). Versions come from Cargo.toml, so the launcher always asks for the
# binary packages of its own release.
#
#   scripts/package-npm.sh                         build this machine's release binary, pack it
#   scripts/package-npm.sh --prebuilt linux-arm64=path/to/mcp-cassette ...
#                                                  pack binaries built elsewhere (release workflow);
#                                                  no cargo build
#   --out <dir>                                    where the tarballs go (default target/npm)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/target/npm"
prebuilt=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --prebuilt) prebuilt+=("$2"); shift 2 ;;
    *) echo "package-npm: unknown argument $1" >&2; exit 2 ;;
  esac
done

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)"
[ -n "$version" ] || { echo "package-npm: no version in Cargo.toml" >&2; exit 1; }

# This machine's platform in Node's words (the platform packages are named that way).
host_platform() {
  node -p 'process.platform + "-" + process.arch'
}

if [ ${#prebuilt[@]} -eq 0 ]; then
  (cd "$root" && cargo build --release --locked)
  exe=mcp-cassette
  case "$(host_platform)" in win32-*) exe=mcp-cassette.exe ;; esac
  prebuilt=("$(host_platform)=$root/target/release/$exe")
fi

mkdir -p "$out"
out="$(cd "$out" && pwd)"
stage="$(mktemp -d "$out/.stage.XXXXXX")"
trap 'rm -rf "$stage"' EXIT

# Copies a package template into the staging area and sets its version (and the versions of the
# binary packages the launcher depends on) to this release's.
stage_package() {
  local from="$1" to="$2"
  mkdir -p "$to"
  cp -R "$from/." "$to/"
  VERSION="$version" node -e '
    const fs = require("node:fs");
    const file = process.argv[1];
    const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
    pkg.version = process.env.VERSION;
    for (const name of Object.keys(pkg.optionalDependencies ?? {})) {
      pkg.optionalDependencies[name] = process.env.VERSION;
    }
    fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
  ' "$to/package.json"
}

pack() {
  (cd "$1" && npm pack --silent --pack-destination "$out" >/dev/null)
}

for pair in "${prebuilt[@]}"; do
  platform="${pair%%=*}"
  binary="${pair#*=}"
  template="$root/npm/platforms/$platform"
  [ -f "$template/package.json" ] || { echo "package-npm: no package template for $platform" >&2; exit 2; }
  [ -f "$binary" ] || { echo "package-npm: no binary at $binary" >&2; exit 2; }
  stage_package "$template" "$stage/$platform"
  exe=mcp-cassette
  case "$platform" in win32-*) exe=mcp-cassette.exe ;; esac
  mkdir -p "$stage/$platform/bin"
  cp "$binary" "$stage/$platform/bin/$exe"
  chmod 755 "$stage/$platform/bin/$exe"
  pack "$stage/$platform"
done

stage_package "$root/npm/mcp-cassette" "$stage/mcp-cassette"
pack "$stage/mcp-cassette"

ls -1 "$out"/*.tgz
