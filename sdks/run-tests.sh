#!/usr/bin/env bash
# Runs every SDK's tests against test/fixtures/join-auth-vectors.json (the one specification of
# the join token and roster manifest bytes), then proves the vectors bind them: each SDK (and the
# TypeScript spec) is run against copies with one byte of one expectation changed and must fail.
# Last line: "sdks: N passed, M failed"; exit status non-zero on any failure.
# csharp-live, godot-live and godot-party-live each play one match to COMPLETED with their SDK's
# player client against the real stack (test/sdk-live/<suite>.spec.ts starts and stops it; needs
# PostgreSQL, Redis and dist/, which its global setup builds); they read no vectors, so they are
# not part of the one-byte runs.
# SDKS="cpp csharp" limits the suites (default: ts cpp csharp godot csharp-live godot-live
# godot-party-live).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
vectors="$root/test/fixtures/join-auth-vectors.json"
suites=${SDKS:-ts cpp csharp godot csharp-live godot-live godot-party-live}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

log() { printf '[sdks] %s\n' "$*"; }
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); log "FAILED: $*"; }

# Runs one suite against a vectors file; prints its output to $2 and returns its exit status.
run_suite() {
  local suite=$1 file=$2 out=$3
  case "$suite" in
    ts)
      JOIN_AUTH_VECTORS=$file npx jest --selectProjects unit --json --outputFile="$out.json" \
        libs/join-auth/src/join-auth.vectors.spec.ts >"$out" 2>&1 ;;
    cpp)
      make -s -C sdks/cpp test VECTORS="$file" >"$out" 2>&1 ;;
    csharp)
      make -s -C sdks/csharp test VECTORS="$file" >"$out" 2>&1 ;;
    godot)
      make -s -C sdks/godot test VECTORS="$file" >"$out" 2>&1 ;;
    csharp-live | godot-live | godot-party-live)
      # The program's own "<suite>: N passed, M failed" line is appended to Jest's output. The
      # spec's path comes first: --selectProjects would take it for a second project name.
      local status variable
      variable=$(echo "${suite}_OUTPUT" | tr 'a-z-' 'A-Z_')
      env "$variable=$out.live" npx jest "test/sdk-live/$suite.spec.ts" --selectProjects sdk-live \
        >"$out" 2>&1
      status=$?
      [ -f "$out.live" ] && cat "$out.live" >>"$out"
      return "$status" ;;
    *) echo "unknown suite $suite" >"$out"; return 2 ;;
  esac
}

# "<suite>: N passed, M failed" from the runners; Jest reports through its JSON file.
count_checks() {
  local suite=$1 out=$2 lines
  if [ "$suite" = ts ]; then
    node -e '
      const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      console.log(`${r.numPassedTests} ${r.numFailedTests + (r.success ? 0 : r.numFailedTests ? 0 : 1)}`);
    ' "$out.json" 2>/dev/null || echo "0 1"
    return
  fi
  # A suite may have several runners (csharp, csharp-client): their counts add up. Godot goes on
  # after a GDScript error with the rest of the script skipped, so each SCRIPT ERROR it printed
  # counts as a failure however its runner's counts read.
  local script_errors=0
  case "$suite" in godot*) script_errors=$(grep -c '^SCRIPT ERROR' "$out") ;; esac
  lines=$(grep -E "^$suite(-[a-z]+)?: [0-9]+ passed, [0-9]+ failed$" "$out")
  if [ -z "$lines" ]; then echo "0 $((1 + script_errors))"; return; fi
  echo "$lines" | sed -E 's/^[a-z-]+: ([0-9]+) passed, ([0-9]+) failed$/\1 \2/' |
    awk -v extra="$script_errors" '{ p += $1; f += $2 } END { print p, f + extra }'
}

# Writes a copy of the vectors with the last character of one field changed (path like tokens.0.macHex).
mutate() {
  local field=$1 out=$2
  node -e '
    const fs = require("fs");
    const [file, path, out] = process.argv.slice(1);
    const v = JSON.parse(fs.readFileSync(file, "utf8"));
    const keys = path.split(".").map((k) => (/^\d+$/.test(k) ? Number(k) : k));
    let parent = v;
    for (const k of keys.slice(0, -1)) parent = parent[k];
    const last = keys[keys.length - 1];
    const text = parent[last];
    const digit = text[text.length - 1];
    parent[last] = text.slice(0, -1) + (digit === "0" ? "1" : "0");
    fs.writeFileSync(out, JSON.stringify(v, null, 2));
  ' "$vectors" "$field" "$out"
}

for suite in $suites; do
  out="$work/$suite.out"
  run_suite "$suite" "$vectors" "$out"
  status=$?
  read -r p f < <(count_checks "$suite" "$out")
  passed=$((passed + p))
  failed=$((failed + f))
  if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then failed=$((failed + 1)); fi
  if [ "$status" -ne 0 ]; then
    log "$suite failed:"; tail -40 "$out"
  else
    log "$suite: $p passed"
    case "$suite" in *-live) ;; *) passing="${passing:-} $suite" ;; esac
  fi
done

# One byte of each kind of expectation: claim bytes, a MAC, a token, a rejection reason, a digest
# input, manifest bytes.
mutations="tokens.0.claimBytesHex tokens.1.macHex tokens.2.token rejections.5.reason rosters.0.digestInputHex rosters.1.manifestBytesHex"
failed_before=$failed
for field in $mutations; do
  mutated="$work/mutated-${field//./-}.json"
  mutate "$field" "$mutated"
  # A suite that fails on the real vectors proves nothing by failing on a mutated copy.
  for suite in ${passing:-}; do
    if run_suite "$suite" "$mutated" "$work/$suite-mutated.out"; then
      fail "$suite accepted vectors with one byte of $field changed"
    else
      pass
    fi
  done
done
[ "$failed" -eq "$failed_before" ] && [ -n "${passing:-}" ] &&
  log "every passing suite (${passing# }) failed on each one-byte change of: $mutations"

echo "sdks: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
