#!/bin/sh
# cli suite: the onnxviz command line on real and broken files; heat overlays (heat.py).
# Checks exit codes (0 ok, 1 bad model, 2 usage), that errors name a code, a byte offset
# and a field path, and that every output format is produced.
set -u
: "${BUILD:=build}"
: "${ONNXVIZ_CORPUS:?}"
BIN=$BUILD/onnxviz
PY=/usr/bin/python3
M=$ONNXVIZ_CORPUS/models
. "$(dirname "$0")/../suite.sh"
suite_start cli
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
expect_rc() { # rc command...
  want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"; got=$?
  if [ "$got" = "$want" ]; then ok; else bad "exit $got (want $want): $*"; sed -n 1,5p "$tmp/err"; fi
}

expect_rc 0 "$BIN" --version
expect_rc 0 "$BIN" --help
expect_rc 2 "$BIN"
expect_rc 2 "$BIN" frobnicate
expect_rc 2 "$BIN" inspect
expect_rc 2 "$BIN" inspect --bogus "$M/real/squeezenet1_1.onnx"
expect_rc 2 "$BIN" render "$M/real/squeezenet1_1.onnx" --rankdir=XY
expect_rc 2 "$BIN" render "$M/real/squeezenet1_1.onnx" --nosuchoption=1

# summaries of real models
for f in "$M/real/squeezenet1_1.onnx" "$M/real/silero_vad_v5.onnx" "$M/real/transformer_12x12.onnx" \
         "$M/onnx-testdata/light/light_resnet50.onnx"; do
  expect_rc 0 "$BIN" inspect "$f"
  grep -q '^ir_version:' "$tmp/out" && grep -q '^ops:' "$tmp/out" && ok || bad "summary of $f"
  "$BIN" inspect --json "$f" > "$tmp/doc.json" && $PY -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['format']=='onnxviz.document/1'; assert d['summary']['nodes']==len(d['nodes'])" "$tmp/doc.json" && ok || bad "inspect --json $f"
done
"$BIN" inspect "$M/real/silero_vad_v5.onnx" | grep -q 'subgraphs' && ok || bad "silero subgraphs in summary"
# named patterns (docs/render.md): counted by op in the summary; patterns= takes fold|nodes
"$BIN" inspect "$M/real/transformer_12x12.onnx" | grep -q '^patterns: .*LayerNormalization ×62, Attention ×36' && ok || bad "inspect: named patterns by op"
expect_rc 2 "$BIN" render "$M/real/squeezenet1_1.onnx" --patterns=some

# the cost (docs/cost.md): totals in the summary agree with inspect --json; symbolic dims
# bound by --dims give the polynomial's value; bad --dims is a usage error
"$BIN" inspect --help | grep -q -- '--dims NAME:VALUE' && ok || bad "inspect --help: --dims"
expect_rc 2 "$BIN" inspect --dims batch "$M/real/squeezenet1_1.onnx"
"$BIN" inspect "$M/real/squeezenet1_1.onnx" > "$tmp/sq.txt" && grep -q '^cost: .* MACs' "$tmp/sq.txt" && grep -q '^    Conv ' "$tmp/sq.txt" && ok || bad "inspect: cost and top op types"
"$BIN" inspect --json "$M/real/squeezenet1_1.onnx" > "$tmp/sq.json" && $PY -c "import json,sys,re; c=json.load(open(sys.argv[1]))['cost']; t=open(sys.argv[2]).read(); m=int(re.search(r'MACs exactly: (\d+)', t).group(1)); assert c['format']=='onnxviz.cost/1' and c['total']['macs']==m==sum(n.get('macs',0) for n in c['nodes']) and m>0, m" "$tmp/sq.json" "$tmp/sq.txt" && ok || bad "inspect --json: cost total = summary = sum of nodes"
"$BIN" inspect --json "$M/real/transformer_12x12.onnx" > "$tmp/tr.json" && "$BIN" inspect --json --dims src_len:10,tgt_len:20 "$M/real/transformer_12x12.onnx" > "$tmp/trb.json" && $PY -c "import json,sys; f=json.load(open(sys.argv[1]))['cost']['total']['macs']; b=json.load(open(sys.argv[2]))['cost']['total']['macs']; v={'src_len':10,'tgt_len':20}; import math; assert 'tgt_len' in f['expr'] and b==sum(t['coef']*math.prod(v[d] for d in t['dims']) for t in f['terms']), (f, b)" "$tmp/tr.json" "$tmp/trb.json" && ok || bad "inspect --dims: the bound figure is the polynomial's value"

# one parameter count (docs/cost.md "Parameters", issue 39 item 3): a 4-bit LLM (MatMulNBits
# without zero points), MatMulNBits with packed zero points, GatherBlockQuantized: inspect's
# text (summary, quantization, cost), --json (summary, quantization, cost) and --format=md
# say the count python3-onnx gives: K x N for a MatMulNBits B, 8/bits values a byte of a
# GatherBlockQuantized row, scales and zero points none, other constants their elements
$PY tests/data/llm_models.py genai "$tmp/llm4.onnx" --layers 4
for f in "$tmp/llm4.onnx" tests/data/quant/nbits4_zp.onnx tests/data/quant/gbq_uint8_packed.onnx; do
  "$BIN" inspect "$f" > "$tmp/p.txt" && "$BIN" inspect --json "$f" > "$tmp/p.json" &&
    "$BIN" inspect --format=md "$f" > "$tmp/p.md" && $PY - "$f" "$tmp/p.txt" "$tmp/p.json" "$tmp/p.md" <<'PY' && ok || bad "one parameter count: $f"
import json, re, sys
import numpy as np
import onnx
m = onnx.load(sys.argv[1])
g = m.graph
attr = lambda n, k, d: next((a.i for a in n.attribute if a.name == k), d)
held = {t.name: int(np.prod(t.dims)) for t in g.initializer}
for n in g.node:
    if n.op_type == "MatMulNBits":
        held[n.input[1]] = attr(n, "K", 0) * attr(n, "N", 0)
        for k in (2, 3):
            if len(n.input) > k and n.input[k]:
                held[n.input[k]] = 0
    if n.op_type == "GatherBlockQuantized":
        held[n.input[0]] *= 8 // attr(n, "bits", 4)
        for k in (2, 3):
            if len(n.input) > k and n.input[k]:
                held[n.input[k]] = 0
want = sum(held.values())
txt, doc, md = open(sys.argv[2]).read(), json.load(open(sys.argv[3])), open(sys.argv[4]).read()
q = doc["summary"]["quantization"]["parameters"]
got = {
    "summary": doc["summary"]["parameters"]["count"],
    "by dtype": sum(e["count"] for e in doc["summary"]["parameters"]["by_dtype"]),
    "quantization": q["quantized"] + q["float"] + q["other"],
    "cost": doc["cost"]["total"]["params"]["weights"],
    "text": int(re.search(r"^parameters: +(\d+) ", txt, re.M).group(1)),
    "text cost": int(re.search(r"^  parameters: (\d+) ", txt, re.M).group(1)),
    "text quantization": sum(int(x) for x in re.findall(r"weights: .*, (\d+) parameters$", txt, re.M))
                         + sum(int(x) for x in re.search(r"float parameters: (\d+), other parameters: (\d+)", txt).groups()),
    "md": int(re.search(r"\| parameters \| ([\d,]+) ", md).group(1).replace(",", "")),
}
assert all(v == want for v in got.values()), (want, got)
PY
done

# render --dims binds the MAC rows: the encoder stack's row "≈ X MACs each" is the block's
# bound figure from inspect --json's cost blocks; unbound it is a polynomial in src_len
"$BIN" render "$M/real/transformer_12x12.onnx" -o "$tmp/tu.svg" && grep -q '≈ [^<]*src_len[^<]*MACs' "$tmp/tu.svg" && ok || bad "render: symbolic MAC rows"
"$BIN" render "$M/real/transformer_12x12.onnx" --dims=src_len:128,tgt_len:64 -o "$tmp/tb.svg" && "$BIN" inspect --json --dims src_len:128,tgt_len:64 "$M/real/transformer_12x12.onnx" > "$tmp/tbc.json" && $PY -c "
import json, re, sys
blocks = {b['path']: b for b in json.load(open(sys.argv[1]))['cost']['blocks']}
svg = open(sys.argv[2], encoding='utf-8').read()
m = re.search(r'≈ ([0-9.]+) ([kMG]?) MACs each · ([0-9.]+) ([kMG]?) in all', svg)
unit = {'': 1, 'k': 1e3, 'M': 1e6, 'G': 1e9}
each = float(m.group(1)) * unit[m.group(2)]
want = blocks['/encoder/layers.0']['macs']
assert isinstance(want, int) and abs(each - want) <= 0.005 * want and 'src_len' not in svg.split('MACs')[0][-200:], (each, want)
" "$tmp/tbc.json" "$tmp/tb.svg" && ok || bad "render --dims: the stack's MAC row is the bound block figure"
expect_rc 2 "$BIN" render "$M/real/squeezenet1_1.onnx" --dims=batch

# every output format, by extension and by --format
for ext in svg dot json; do
  expect_rc 0 "$BIN" render "$M/real/squeezenet1_1.onnx" -o "$tmp/g.$ext"
  [ -s "$tmp/g.$ext" ] && ok || bad "render .$ext empty"
done
head -c 200 "$tmp/g.svg" | grep -q '<svg' && ok || bad "svg header"
head -c 50 "$tmp/g.dot" | grep -q 'digraph' && ok || bad "dot header"
$PY -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['format']=='onnxviz.layout/1' and j['nodes']" "$tmp/g.json" && ok || bad "layout json"
"$BIN" render "$M/real/squeezenet1_1.onnx" --format=dot > "$tmp/stdout.dot" && grep -q digraph "$tmp/stdout.dot" && ok || bad "render --format=dot to stdout"
expect_rc 0 "$BIN" render "$M/real/transformer_12x12.onnx" --group=none --rankdir=LR --shapes=off --attrs=all -o "$tmp/t.svg"
# attributes left to their schema defaults: grey italic rows in the SVG, row style
# "default" in the layout JSON (Conv's auto_pad "NOTSET")
expect_rc 0 "$BIN" render "$M/real/squeezenet1_1.onnx" --attrs=all -o "$tmp/sq.svg"
expect_rc 0 "$BIN" render "$M/real/squeezenet1_1.onnx" --attrs=all -o "$tmp/sq.json"
grep -q 'class="default">auto_pad' "$tmp/sq.svg" && ok || bad "attrs=all SVG: auto_pad as a default row"
grep -q '{"style":"default","text":"auto_pad' "$tmp/sq.json" && ok || bad "attrs=all layout JSON: auto_pad with row style default"
# a heat view's layout JSON carries what the SVG shows of it (web/canvas.js draws from it):
# the legend's labels and swatches in the SVG's order, its captions, and which rows are
# the figures (the SVG's text.heat-value)
expect_rc 0 "$BIN" render "$M/real/squeezenet1_1.onnx" --overlay cost --metric macs -o "$tmp/sqh.svg"
expect_rc 0 "$BIN" render "$M/real/squeezenet1_1.onnx" --overlay cost --metric macs -o "$tmp/sqh.json"
$PY - "$tmp/sqh.svg" "$tmp/sqh.json" <<'PY' && ok || bad "heat layout JSON: the SVG's legend and figure rows"
import json, re, sys
svg, lay = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
lg = re.search(r'<g id="legend" class="legend heat-legend">(.*?)</g>', svg).group(1)
items = []
for attrs, text in re.findall(r'<rect ([^>]*)/>|<text [^>]*>([^<]*)</text>', lg):
    if attrs and 'stroke=' in attrs:
        break  # the "no data" swatch ends the scale
    items.append(['swatch', re.search(r'fill="([^"]*)"', attrs).group(1)] if attrs else ['text', text])
texts = re.findall(r'>([^<]*)</text>', lg)
want_rows = re.findall(r'class="heat-value"[^>]*>([^<]*)</text>', svg)
got_rows = [r['text'] for b in lay['nodes'] for r in b['rows'] if r.get('heat')]
L = lay['heat']['legend']
assert L['items'] == items, (L['items'], items)
assert [L['caption'], L['source']] == texts[-2:], (L, texts)
assert got_rows == want_rows and len(got_rows) > 20, (got_rows[:3], want_rows[:3])
PY
# and the boxes of named patterns, as the SVG's data-pattern (the page selects a node
# inside one through it)
expect_rc 0 "$BIN" render "$M/real/transformer_12x12.onnx" --group=none -o "$tmp/tp.svg"
expect_rc 0 "$BIN" render "$M/real/transformer_12x12.onnx" --group=none -o "$tmp/tp.json"
$PY -c "import json,re,sys; s=open(sys.argv[1]).read(); j=json.load(open(sys.argv[2])); want=re.findall(r'<g id=\"([^\"]*)\"[^>]*data-pattern=\"([^\"]*)\"', s); got=[(b['id'], b['pattern']) for b in j['nodes'] if 'pattern' in b]; assert got == want and len(got) > 10, (got[:3], want[:3])" "$tmp/tp.svg" "$tmp/tp.json" && ok || bad "layout JSON: pattern as the SVG's data-pattern"

# broken inputs: exit 1, a code, a byte offset; never a crash
: > "$tmp/empty.onnx"
expect_rc 1 "$BIN" inspect "$tmp/empty.onnx"
grep -q 'not_a_model' "$tmp/err" && ok || bad "empty file: not_a_model"
head -c 1000 "$M/real/squeezenet1_1.onnx" > "$tmp/cut.onnx"
expect_rc 1 "$BIN" inspect "$tmp/cut.onnx"
grep -Eq 'truncated|bad_length' "$tmp/err" && grep -q 'at byte [0-9]' "$tmp/err" && grep -q ' in graph' "$tmp/err" && ok || { bad "truncated model message"; cat "$tmp/err"; }
printf '\010\377\377\377\377\377\377\377\377\377\377\001' > "$tmp/varint.onnx"
expect_rc 1 "$BIN" inspect "$tmp/varint.onnx"
grep -q 'bad_varint' "$tmp/err" && ok || { bad "11-byte varint"; cat "$tmp/err"; }
printf '\072\377\377\377\377\007' > "$tmp/len.onnx"
expect_rc 1 "$BIN" inspect "$tmp/len.onnx"
grep -q 'bad_length' "$tmp/err" && ok || { bad "length beyond the end"; cat "$tmp/err"; }
expect_rc 1 "$BIN" inspect "$tmp/does-not-exist.onnx"
expect_rc 1 "$BIN" inspect "$tmp"

# mistakes in a person's words (issue 39, parser/headline.c): the first line says what to
# do and has no word of the encoding; the code and the exact message stay on the next
protobuf_words='protobuf|wire type|varint|[^a-z]tag|field|ModelProto|length prefix|group'
headline() { # file want-regex label
  expect_rc 1 "$BIN" inspect "$1"
  first=$(sed -n 1p "$tmp/err"); first=${first#*"$1": } # the words after the file's name
  if printf '%s\n' "$first" | grep -Eq "$2" && ! printf '%s\n' "$first" | grep -Eiq "$protobuf_words" &&
     sed -n 2p "$tmp/err" | grep -Eq ': [a-z_]+: .* at byte [0-9]+'; then ok; else bad "headline of $3"; cat "$tmp/err"; fi
}
printf 'These are my notes about the model.\nNot a model.\n' > "$tmp/notes.onnx"
headline "$tmp/notes.onnx" '^this is not an ONNX model: it looks like text$' "a .txt renamed .onnx"
headline "$tmp/cut.onnx" '^the file ends early: 1,000 of at least 4,950,054 bytes — was the download or copy cut short\?$' "the first 1000 bytes of a model"
headline "$tmp/empty.onnx" '^the file is empty \(0 bytes\)' "an empty file"
printf '\211PNG\r\n\032\n\000\000\000\rIHDR\000\000\000\001' > "$tmp/picture.onnx"
headline "$tmp/picture.onnx" '^this is not an ONNX model: it is a PNG image$' "a PNG"
printf 'PK\003\004\024\000\000\000\010\000' > "$tmp/model.pt"
headline "$tmp/model.pt" '^this is not an ONNX model: it is a zip archive \(a PyTorch' "a PyTorch checkpoint"
headline "$tmp/varint.onnx" '^this is not an ONNX model, or it is damaged' "malformed bytes"
# a length past the end inside the file (not a cut download): damaged, not "ends early"
printf '\010\007\072\003\012\177\000\022\005abcde' > "$tmp/inner.onnx"
headline "$tmp/inner.onnx" '^the model is damaged' "a length past its message"
expect_rc 1 "$BIN" render "$tmp/cut.onnx" -o "$tmp/x.svg"
# output that cannot be written: exit 1 with a message, an existing file left as it was
expect_rc 1 "$BIN" render "$M/real/squeezenet1_1.onnx" -o /dev/full
grep -q 'cannot write /dev/full' "$tmp/err" && ok || bad "render -o /dev/full: message"
"$BIN" render "$M/real/squeezenet1_1.onnx" --format=dot > /dev/full 2>"$tmp/err"
[ $? = 1 ] && grep -q 'cannot write' "$tmp/err" && ok || bad "render to a full stdout"
expect_rc 1 "$BIN" render "$M/real/squeezenet1_1.onnx" -o "$tmp/no/such/dir/x.svg"
grep -q "cannot write $tmp/no/such/dir/x.svg" "$tmp/err" && ok || bad "render -o into a missing folder: message"
echo old > "$tmp/keep.svg"
expect_rc 1 "$BIN" render "$tmp/cut.onnx" -o "$tmp/keep.svg"
[ "$(cat "$tmp/keep.svg")" = old ] && ok || bad "a failed render replaced the output file"
expect_rc 0 "$BIN" render "$M/real/squeezenet1_1.onnx" -o "$tmp/keep.svg"
head -c 200 "$tmp/keep.svg" | grep -q '<svg' && ok || bad "render -o over an existing file"
ls "$tmp" | grep -q '\.tmp-' && bad "a temporary output file was left" || ok
# every prefix of a small model fails cleanly or parses (never a crash: exit 0 or 1)
f=$M/onnx-testdata/simple/test_single_relu_model/model.onnx
n=$(wc -c < "$f")
crashes=0
i=0
while [ $i -lt "$n" ]; do
  head -c $i "$f" > "$tmp/p.onnx"
  "$BIN" inspect "$tmp/p.onnx" > /dev/null 2>&1
  rc=$?
  [ $rc -le 1 ] || crashes=$((crashes + 1))
  i=$((i + 1))
done
[ $crashes = 0 ] && ok || bad "$crashes prefixes of $f crashed the CLI"

# onnxviz check: 0 without errors, 1 with errors, 2 unreadable or usage; text and JSON
expect_rc 0 "$BIN" check "$M/real/squeezenet1_1.onnx"
grep -q "squeezenet1_1.onnx: 0 errors" "$tmp/out" && ok || bad "check: summary line"
expect_rc 0 "$BIN" check --json "$M/real/silero_vad_v5.onnx"
$PY -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['format']=='onnxviz.check/1' and d['ok'] and d['errors']==0" "$tmp/out" && ok || bad "check --json of a clean model"
$PY - "$tmp" <<'PYEOF' && ok || bad "check: building the broken model"
import sys
from onnx import TensorProto as T, helper as h, save
x = h.make_tensor_value_info("x", T.FLOAT, [2])
y = h.make_tensor_value_info("y", T.FLOAT, [2])
g = h.make_graph([h.make_node("Cast", ["x"], ["c"]), h.make_node("Relu", ["c"], ["y"])], "g", [x], [y])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
m.ir_version = 8
save(m, sys.argv[1] + "/cast.onnx")
PYEOF
expect_rc 1 "$BIN" check "$tmp/cast.onnx"
grep -Eq '^error +missing_attribute +n0 ' "$tmp/out" && grep -q "cast.onnx: 1 error" "$tmp/out" && ok || { bad "check: the problem line"; cat "$tmp/out"; }
expect_rc 1 "$BIN" check --json "$tmp/cast.onnx"
$PY -c "import json,sys; d=json.load(open(sys.argv[1])); p=d['problems'][0]; assert not d['ok'] and d['by_code']=={'missing_attribute':1} and p['node']=='n0' and p['op_type']=='Cast' and p['severity']=='error'" "$tmp/out" && ok || bad "check --json of a broken model"
expect_rc 2 "$BIN" check "$tmp/cut.onnx"
grep -Eq 'truncated|bad_length' "$tmp/err" && ok || bad "check of an unreadable model: message"
expect_rc 2 "$BIN" check "$tmp/does-not-exist.onnx"
expect_rc 2 "$BIN" check
expect_rc 2 "$BIN" check --bogus "$M/real/squeezenet1_1.onnx"
expect_rc 2 "$BIN" check "$tmp/cast.onnx" "$tmp/cast.onnx"
expect_rc 0 "$BIN" check --help

# heat overlays (issue 26, docs/overlays.md): real ONNX Runtime profiles recorded here,
# Model Explorer / Netron / CSV files, the built-in cost, hostile overlay files
$PY "$(dirname "$0")/heat.py" "$BIN" "$M" "$tmp" > "$tmp/heat.out" 2>&1; hrc=$?
grep -v '^ok ' "$tmp/heat.out"
hp=$(sed -n 's/^heat: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$tmp/heat.out")
hf=$(sed -n 's/^heat: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$tmp/heat.out")
if [ -z "$hp" ] || [ -z "$hf" ]; then
  bad "heat.py ended without its counts (exit $hrc)"
else
  pass=$((pass + hp)); fail=$((fail + hf))
  [ "$hrc" = 0 ] || [ "$hf" != 0 ] || bad "heat.py exited $hrc with no failure counted"
fi

echo "cli: $pass passed, $fail failed, 0 skipped"
[ $fail = 0 ]
