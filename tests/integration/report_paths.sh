#!/usr/bin/env bash
# report_paths.sh - paths in the reports are shown as git shows them
# (issue 11 item 5):
#  - the text report (--report, here of a --dry-run) writes each path as
#    `git -c core.quotePath=true ls-files` does: C-quoted when it has a
#    control byte, '"', '\' or a byte >= 0x80, else raw (a space is not
#    quoted); git's own output is the oracle;
#  - the JSON report (--report-json) parses, and each path decodes back to
#    its exact bytes: a UTF-8 path as a string, any other as "path": null
#    plus "path_hex"; caf\xe9.psd (Latin-1) and café.psd (UTF-8) differ.
. "$(dirname "$0")/lib/lib.sh"

R="$SCRATCH/repo"
git init -q "$R"
names=($'caf\xc3\xa9.psd' $'caf\xe9.psd' $'tab\there.psd' $'new\nline.psd'
	'quo"te.psd' 'back\slash.psd' 'with space.psd' 'plain.psd')
i=0
for n in "${names[@]}"; do
	i=$((i + 1))
	# distinct contents: the largest-blobs list is of distinct blobs
	head -c $((1000 + 100 * i)) /dev/zero | tr '\0' "$(printf "\\$(printf %o $((64 + i)))")" >"$R/$n"
done
git -C "$R" add -A && git -C "$R" commit -qm "odd names"
[ "$(git -C "$R" ls-files -z | tr -cd '\0' | wc -c)" -eq "${#names[@]}" ] ||
	die "git did not take every name"
printf '*.psd lfs\n' >"$SCRATCH/lfs.rules"
export_stream "$R" >"$SCRATCH/in.fe"
git -C "$R" -c core.quotePath=true ls-files >"$SCRATCH/ls.txt"
git -C "$R" ls-files -z >"$SCRATCH/ls.z"

test_case "a dry run writes the text and the JSON report" <<'EOF'
(cd "$R" && run_migrate --rules "$SCRATCH/lfs.rules" --dry-run \
	--report "$SCRATCH/r.txt" --report-json "$SCRATCH/r.json") \
	<"$SCRATCH/in.fe" >/dev/null || die "dry run failed"
EOF

# the next two read the reports of the dry run above
test_case "the text report shows each path as git ls-files does (core.quotePath=true)" <<'EOF'
python3 - "$SCRATCH/r.txt" "$SCRATCH/ls.txt" <<'PY' ||
import sys
txt, ls = sys.argv[1:3]
# text: the lines under "largest blobs:" are "  %12s  PATH"
lines = open(txt, "rb").read().split(b"\n")
at = lines.index(b"largest blobs:")
shown = [l[16:] for l in lines[at + 1:] if l.startswith(b"  ")]
want = open(ls, "rb").read().split(b"\n")[:-1]
assert len(want) == 8, want
assert sorted(shown) == sorted(want), ("text report", sorted(shown), sorted(want))
assert b"with space.psd" in shown and b'"caf\\303\\251.psd"' in shown, shown
print("info: text report = git ls-files (core.quotePath=true) for %d paths" % len(want))
PY
	die "the text report does not show the paths as git does"
EOF

test_case "the JSON report parses and each path decodes to its exact bytes (Latin-1 as path_hex)" <<'EOF'
python3 - "$SCRATCH/r.json" "$SCRATCH/ls.z" <<'PY' ||
import json, sys
js, lsz = sys.argv[1:3]
# JSON: parse strictly (bytes must be UTF-8) and decode each path
d = json.loads(open(js, "rb").read().decode("utf-8"))
def path_bytes(e):
    if e["path"] is None:
        return bytes.fromhex(e["path_hex"])
    assert "path_hex" not in e, e
    return e["path"].encode("utf-8")
got = [path_bytes(e) for e in d["largest"]]
exact = open(lsz, "rb").read().split(b"\0")[:-1]
assert sorted(got) == sorted(exact), ("json report", sorted(got), sorted(exact))
assert "caf\u00e9.psd".encode() in got and b"caf\xe9.psd" in got
assert len(set(got)) == len(got) == 8
latin = [e for e in d["largest"] if e["path"] is None]
assert len(latin) == 1 and latin[0]["path_hex"] == "636166e92e707364", latin
print("info: JSON paths decode to their exact bytes")
PY
	die "the JSON report does not give the paths' bytes"
EOF

test_done
