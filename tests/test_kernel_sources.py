"""What NVRTC is given: every .cu file with its quoted includes pasted in by
minitorch.cuda.compiler.source. NVRTC gets no include directory for our own headers, so a quoted
include that source() leaves in the text fails at run time on the GPU ("cannot open source file")
even though nvcc, given -I, compiles the file (tests/test_nvcc.py). No GPU or nvcc needed."""
import re

import pytest

from minitorch.cuda.compiler import KERNEL_DIR, source

FILES = sorted(KERNEL_DIR.rglob("*.cu"))
QUOTED = re.compile(r'^\s*#\s*include\s+"', re.M)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(KERNEL_DIR).as_posix())
def test_every_quoted_include_is_pasted_in(path):
    text, files = source(path)
    assert not QUOTED.search(text), f"{path.name}: a quoted include was left for NVRTC:\n" + "\n".join(
        line for line in text.splitlines() if QUOTED.match(line))
    assert path in files


def test_an_include_with_a_trailing_comment_is_pasted_in(tmp_path):
    (tmp_path / "h.cuh").write_text("#define FROM_HEADER 1\n")
    (tmp_path / "k.cu").write_text('#include "h.cuh"   // why we include it\nint x = FROM_HEADER;\n')
    text, files = source(tmp_path / "k.cu")
    assert "#define FROM_HEADER 1" in text and (tmp_path / "h.cuh").resolve() in files
