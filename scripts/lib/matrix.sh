# Shared by scripts/nats-matrix.sh and scripts/kube-matrix.sh (sourced, not run): their arguments,
# one test file against one version, and the table of results. The sourcing script sets MATRIX
# (its name in messages), MATRIX_VERSIONS and ROOT, sources scripts/lib/go-install.sh (now_ms,
# elapsed) and defines usage.
# shellcheck shell=bash

die() { echo "$MATRIX: $*" >&2; exit 1; }

# In the checkout, with node_modules and Go at hand; sets matrix_start.
matrix_begin() {
  cd "$ROOT"
  [[ -d node_modules ]] || die "node_modules is missing; run: npm ci"
  if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then PATH=$PATH:/usr/local/go/bin; fi
  matrix_start=$(now_ms)
}

# Sets versions and include_pinned from the command line: the matrix's versions, those and the
# pinned one (--all), or the versions given.
matrix_arguments() { # ARG...
  include_pinned=false
  versions=("${MATRIX_VERSIONS[@]}")
  case "${1:-}" in
    --all) include_pinned=true ;;
    -h | --help) usage; exit 0 ;;
    v*) versions=("$@") ;;
    "") ;;
    *) echo "$MATRIX: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
}

# Runs each file against each version, one at a time: a line per file (the log of a failed one
# whole), then a table row per version. version_env VERSION, defined by the sourcing script,
# prints the VAR=value lines a version's files run with, and version_title VERSION the line that
# heads its files; prepared (an associative array) holds what installing or building each version
# took. Fails if any file failed.
matrix_run() { # SETUP-COLUMN FILE...
  local setup_column=$1 files=("${@:2}") log_dir rows=() passed_total=0 failed_total=0
  local version file start passed failed tests failed_tests
  log_dir=$(mktemp -d "${TMPDIR:-/tmp}/$MATRIX.XXXXXX")
  for version in "${versions[@]}"; do
    version_title "$version"
    start=$(now_ms)
    passed=0 failed=0 tests=0 failed_tests=0
    for file in "${files[@]}"; do
      if matrix_run_file "$version" "$file" "$log_dir"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
      tests=$((tests + ${tests_passed:-0} + ${tests_failed:-0}))
      failed_tests=$((failed_tests + ${tests_failed:-0}))
    done
    rows+=("$(printf '%-10s %-13s %-13s %-15s %-9s %s' "$version" "$passed/${#files[@]}" "$failed" \
      "$((tests - failed_tests))/$tests" "${prepared[$version]}" "$(elapsed "$start")")")
    passed_total=$((passed_total + passed))
    failed_total=$((failed_total + failed))
  done
  echo
  printf '%-10s %-13s %-13s %-15s %-9s %s\n' version "files passed" "files failed" "tests passed" "$setup_column" run
  printf '%s\n' "${rows[@]}"
  echo "logs in $log_dir"
  echo "$MATRIX: $passed_total passed, $failed_total failed"
  ((failed_total == 0))
}

# One file against one version: its spec output to a log, a line here; the log on failure.
matrix_run_file() { # VERSION FILE LOG-DIR -> sets tests_passed, tests_failed; fails if the file fails
  local version=$1 file=$2 log start status=0 vars
  log=$3/$version-$(basename "$file" .test.ts).log
  start=$(now_ms)
  mapfile -t vars < <(version_env "$version")
  env "${vars[@]}" node --import tsx --test --test-concurrency=1 --test-timeout=1200000 --test-force-exit \
    --test-reporter=spec "$file" >"$log" 2>&1 || status=$?
  tests_passed=$(sed -n 's/^ℹ pass //p' "$log")
  tests_failed=$(sed -n 's/^ℹ fail //p' "$log")
  if ((status == 0)); then
    echo "  ok    $file (${tests_passed:-?} tests, $(elapsed "$start"))"
  else
    echo "  FAIL  $file (exit $status, ${tests_failed:-?} of $((${tests_passed:-0} + ${tests_failed:-0})) tests failed, $(elapsed "$start")); its log:"
    sed 's/^/    | /' "$log"
  fi
  return "$status"
}
