#!/usr/bin/env bash
# Prints the release notes of one version: its section of CHANGELOG.md, without the heading.
# The release workflow (.github/workflows/release.yml) publishes them; exit 1 when the section
# is missing or empty, so a release cannot go out without notes.
#
# Usage: scripts/release-notes.sh VERSION      (e.g. 0.1.0, no leading v)
set -euo pipefail

version=${1:?usage: scripts/release-notes.sh VERSION}
changelog=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)/CHANGELOG.md

# From "## [VERSION]" up to the next "## [" heading or the link definitions at the end.
notes=$(awk -v heading="## [$version]" '
  index($0, heading) == 1 && (length($0) == length(heading) || substr($0, length(heading) + 1, 1) == " ") { inside = 1; next }
  inside && (/^## \[/ || /^\[[^]]+\]: /) { exit }
  inside { print }
' "$changelog" | sed -e '/./,$!d')   # drop leading blank lines; $(...) drops trailing ones

if [[ -z ${notes//[[:space:]]/} ]]; then
  echo "release-notes: CHANGELOG.md has no notes for $version" >&2
  exit 1
fi
printf '%s\n' "$notes"
