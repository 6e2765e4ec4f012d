#!/usr/bin/python3
"""widths.py — the widths boxes are sized with (render/fontwidths.h, through
build/tools/textwidth) against the font files, measured by PIL (FreeType, HarfBuzz):

  - every character up to U+2FFF and a few beyond (CJK, emoji, U+FFFD), alone: no
    narrower than in either font, regular and bold (a combining mark alone is drawn on a
    dotted circle; what a font lacks it draws as its .notdef box);
  - every pair of printable ASCII and the symbols the drawings use (… ⟨ ⟩ × · → –): no
    narrower than either font draws the pair, kerning included;
  - a few strings of the drawings: the same.
Exits 1 on any character or pair found narrower (the fonts changed: regenerate the table
with tests/tools/fontwidths.py).
"""
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import textfit  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, os.environ.get("BUILD", "build"), "tools", "textwidth")
SIZE = 2048
# code points that cannot stand on a line of their own (controls, surrogates, separators)
SKIP = set(range(0, 0x20)) | set(range(0x7F, 0xA0)) | set(range(0xD800, 0xE000)) | \
    {0x2028, 0x2029, 0x85}
# beyond: CJK, Hangul, U+FFFD, emoji (DejaVu has some), a private-use character
OTHERS = [0x4E00, 0x9FA5, 0xAC00, 0xFFFD, 0x1F600, 0x1F680, 0xE000]
SYMBOLS = "\u2026\u27e8\u27e9\u00d7\u00b7\u2192\u2013\ufffd"
STRINGS = ["/encoder/layers.10/self_attn/Softmax", "W \u27e864\u00d73\u00d77\u00d77\u27e9 f16",
           "axes \u27e81\u27e9 i64 = [0]", "layers.3 \u00b7 89 nodes", "x \u2192",
           "\u2192 attention_mask", "Add \u00d710, Mul \u00d77, Div \u00d75", "-J-J-J-J",
           "If \u00b7 then_branch", "1\u00d7N\u00d73136\u00d796"]


def main():
    start = time.time()
    if not os.path.exists(TOOL):
        print("widths: %s missing (make tools)" % TOOL)
        return 1
    fonts = [(fam, textfit.measurer(fam)) for fam in ("dejavu", "liberation")]
    if any(w is None for _, w in fonts):
        print("widths: python3-pil or the DejaVu/Liberation fonts missing (make deps)")
        return 1
    chars = [c for c in range(0x20, 0x3000) if c not in SKIP] + OTHERS
    kerned = [chr(c) for c in range(0x20, 0x7F)] + list(SYMBOLS)
    lines = [chr(c) for c in chars] + [a + b for a in kerned for b in kerned] + STRINGS
    r = subprocess.run([TOOL], input="\n".join(lines).encode() + b"\n", capture_output=True,
                       timeout=120, check=True)
    ours = [tuple(float(x) for x in ln.split()) for ln in r.stdout.decode().splitlines()]
    if len(ours) != len(lines):
        print("widths: the tool answered %d lines for %d" % (len(ours), len(lines)))
        return 1
    narrow = []
    for text, (reg, bold) in zip(lines, ours):
        for fam, width in fonts:
            for is_bold, mine in ((False, reg), (True, bold)):
                # measured on a font of SIZE pixels: one pixel per font unit
                real = width(text, SIZE / textfit.SCALE, is_bold) * textfit.SCALE
                if real > mine + 0.5:
                    narrow.append("%r %s%s: %.0f < %.0f" % (text, fam, " bold" if is_bold else "",
                                                            mine, real))
    for n in narrow[:20]:
        print("   narrower than the font:", n)
    print("widths: %d characters, %d pairs, %d strings; %d narrower than a font, %.1f s" %
          (len(chars), len(kerned) ** 2, len(STRINGS), len(narrow), time.time() - start))
    return 1 if narrow else 0


if __name__ == "__main__":
    sys.exit(main())
