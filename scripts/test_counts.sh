#!/usr/bin/env bash
# Counts of one suite's tests from its log, the same way on both runners: each it() once,
# "<passed> <failed> <skipped>". Sourced by scripts/test.sh.
#
# Bun prints the counts of its it() cases. Deno reports a top-level describe as a test and a
# nested describe as a step, so its summary counts neither the it() cases alone nor the same
# way as Bun: the cases are counted from its log. A result line ("name ... ok (1ms)") closes a
# describe when a line "name ..." at the same depth opened it and deeper lines came between (a
# case that prints output is opened too, with only its output between). Output blocks are
# skipped; the counting stops at the ERRORS heading. A skip decided inside a running test
# (t.skip()) is a pass on Deno and a skip on Bun: tests declare their skips ({ skip: ... }).

deno_counts() { # log
  awk '
    /^ ERRORS $/ { exit }
    /^-+ .*output end -+$/ { out = 0; next }
    /^-+ .*output -+$/ { out = 1; next }
    out { next }
    / \.\.\.$/ {
      match($0, /^ */); d = RLENGTH
      name[d] = substr($0, d + 1, length($0) - d - 4); kids[d] = 0; kids[d - 2] = 1
      next
    }
    match($0, / \.\.\. (ok|FAILED|ignored)( .*)?$/) {
      head = substr($0, 1, RSTART - 1); rest = substr($0, RSTART + 5)
      match(head, /^ */); d = RLENGTH; n = substr(head, d + 1)
      if ((d in name) && name[d] == n && kids[d]) { delete name[d]; next }
      delete name[d]; kids[d - 2] = 1
      split(rest, w, " "); count[w[1]]++
    }
    END { printf "%d %d %d\n", count["ok"], count["FAILED"], count["ignored"] }
  ' "$1"
}

bun_counts() { # log
  awk '
    /^ *[0-9]+ pass$/ { pass = $1 }
    /^ *[0-9]+ fail$/ { fail = $1 }
    /^ *[0-9]+ (skip|todo)$/ { skip += $1 }
    END { printf "%d %d %d\n", pass, fail, skip }
  ' "$1"
}

# The names of the skipped tests in a Bun log, one a line.
bun_skipped() { # log
  sed -n 's/^(skip) //p; s/^(todo) //p' "$1" | sed 's/ \[[0-9.]*m\?s\]$//' | sort -u
}
