#!/usr/bin/env bash
# Non-test functions longer than a limit (default 150 lines, the fn line to its closing brace)
# in the library crates and the CLI: prints `path:line: name (N lines)` for each, exits 1 if
# any. tests/code_shape.rs runs it, so the limit stays true.
#
#   scripts/long_fns.sh [LIMIT [ROOT]]      ROOT: the workspace to look at (default: this one)
#
# A brace counter, not a parser: it skips comments, string literals (raw ones too) and char
# literals, and leaves out `#[cfg(test)]` items and files under tests/ and benches/.
set -euo pipefail
limit=${1:-150}
cd "${2:-$(dirname "$0")/..}"
dirs=()
for d in model sim validate reports src test-support; do [ -d "$d" ] && dirs+=("$d"); done
[ ${#dirs[@]} -gt 0 ] || { echo "long_fns: no crate directories under $PWD" >&2; exit 2; }
out=$(find "${dirs[@]}" -name '*.rs' -not -path '*/tests/*' -not -path '*/benches/*' \
  -not -path '*/target/*' | LC_ALL=C sort | while read -r f; do
  awk -v limit="$limit" -v file="$f" '
    # Strips comments, strings and char literals from one line, keeping state across lines.
    function strip(s,    out, i, c, n, rest) {
      out = ""; n = length(s); i = 1
      while (i <= n) {
        c = substr(s, i, 1)
        if (inblock) {
          if (substr(s, i, 2) == "*/") { inblock = 0; i += 2 } else i++
          continue
        }
        if (instr) {
          if (rawhash >= 0) {
            close_seq = "\"" sprintf("%*s", rawhash, ""); gsub(/ /, "#", close_seq)
            if (substr(s, i, length(close_seq)) == close_seq) { instr = 0; i += length(close_seq) } else i++
          } else if (c == "\\") i += 2
          else if (c == "\"") { instr = 0; i++ }
          else i++
          continue
        }
        if (substr(s, i, 2) == "//") break
        if (substr(s, i, 2) == "/*") { inblock = 1; i += 2; continue }
        if (c == "r" && match(substr(s, i), /^r#*"/) && (i == 1 || substr(s, i - 1, 1) !~ /[A-Za-z0-9_]/)) {
          rawhash = RLENGTH - 2; instr = 1; i += RLENGTH; continue
        }
        if (c == "\"") { instr = 1; rawhash = -1; i++; continue }
        if (c == "\x27") {
          rest = substr(s, i)
          if (match(rest, /^\x27\\[^\x27]*\x27/) || match(rest, /^\x27[^\\\x27]\x27/)) { i += RLENGTH; continue }
        }
        out = out c; i++
      }
      return out
    }
    {
      line = strip($0)
      if (!infn && skipdepth < 0 && $0 ~ /^[ \t]*#\[cfg\(test\)\]/) { pending_test = 1 }
      opens = gsub(/\{/, "{", line); closes = gsub(/\}/, "}", line)
      if (pending_test && skipdepth < 0 && opens > 0) { skipdepth = depth; pending_test = 0 }
      else if (pending_test && skipdepth < 0 && line ~ /;[ \t]*$/ && line !~ /^[ \t]*#/) pending_test = 0
      if (skipdepth < 0 && !infn && line ~ /(^|[^A-Za-z0-9_])fn[ \t]+[A-Za-z_][A-Za-z0-9_]*/) {
        match(line, /fn[ \t]+[A-Za-z_][A-Za-z0-9_]*/); name = substr(line, RSTART + 3, RLENGTH - 3)
        sub(/^[ \t]+/, "", name)
        infn = 1; start = NR; fndepth = depth; opened = 0
      }
      depth += opens - closes
      if (infn) {
        if (opens > 0) opened = 1
        if (!opened && line ~ /;[ \t]*$/) infn = 0
        else if (opened && depth <= fndepth) {
          len = NR - start + 1
          if (len > limit) printf "%s:%d: %s (%d lines)\n", file, start, name, len
          infn = 0
        }
      }
      if (skipdepth >= 0 && depth <= skipdepth) skipdepth = -1
    }
    BEGIN { depth = 0; infn = 0; skipdepth = -1; inblock = 0; instr = 0; rawhash = -1 }
  ' "$f"
done)
if [ -n "$out" ]; then
  echo "$out"
  exit 1
fi
