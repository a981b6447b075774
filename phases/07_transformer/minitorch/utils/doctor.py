# GENERATED from minitorch/utils/doctor.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 01
"""``minitorch-course doctor``: is this machine ready for the course's GPU parts? Each failure with its fix.

    minitorch-course doctor          # or: python -m minitorch.utils.doctor

Checks, in the order a problem blocks the next (a check that depends on a failed one is skipped):

1. ``gpu``: an NVIDIA GPU is visible (``nvidia-smi`` on the PATH, or ``/dev/nvidia0``).
2. ``driver``: ``nvidia-smi`` answers, with the GPU's name and the driver version.
3. ``cupy``: CuPy imports, and only one CuPy wheel is installed.
4. ``cuda runtime``: the CUDA version CuPy's wheel was built for is one the driver supports
   (the commonest failure: a ``cupy-cuda13x`` wheel on a CUDA 12 driver).
5. ``nvrtc``: NVRTC compiles our ``fill.cu`` and the kernel runs and writes the right values.
6. ``memory``: enough free device memory for the notebooks (``MIN_FREE_GIB``).
7. ``jupyter kernel``: a Jupyter kernel runs this Python (the one minitorch is installed in).

Exit status 0 when nothing failed, 1 otherwise. Every check is a function of :class:`Probe`,
whose methods are the only things that touch the machine, so each failure path is testable on a CPU.
"""
import importlib.metadata
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

MIN_FREE_GIB = 2.0          # the largest notebook working set (phase 02's 64M-element races) plus headroom


@dataclass
class Check:
    """One line of the report: ``status`` is ``'ok'``, ``'fail'`` or ``'skip'``; ``fix`` says what to do."""
    name: str
    status: str
    detail: str
    fix: str = ""

    def __str__(self):
        mark = {"ok": "ok  ", "fail": "FAIL", "skip": "skip"}[self.status]
        text = f"[{mark}] {self.name:15s} {self.detail}"
        return text + (f"\n       fix: {self.fix}" if self.fix else "")


class Probe:
    """What the checks ask the machine; tests replace these methods to walk the failure paths."""

    def which(self, name):
        return shutil.which(name)

    def exists(self, path):
        return os.path.exists(path)

    def nvidia_smi(self):
        """(returncode, stdout + stderr) of ``nvidia-smi --query-gpu=name,driver_version``."""
        try:
            done = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                                  capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.SubprocessError) as e:
            return 1, str(e)
        return done.returncode, (done.stdout + done.stderr).strip()

    def cupy_wheels(self):
        """Names of the installed CuPy distributions (cupy, cupy-cuda12x, ...)."""
        return sorted({d.metadata["Name"] for d in importlib.metadata.distributions()
                       if (d.metadata["Name"] or "").lower().startswith("cupy")})

    def import_cupy(self):
        import cupy
        return cupy

    def versions(self, cupy):
        """(driver's CUDA version, CuPy's CUDA runtime version), as ints like 12040."""
        return cupy.cuda.runtime.driverGetVersion(), cupy.cuda.runtime.runtimeGetVersion()

    def fill_kernel(self):
        """Compile fill.cu with NVRTC, launch it on 1000 floats, return the values read back."""
        import minitorch
        return minitorch.empty(1000, device="cuda").fill_(3.0).cpu().numpy()

    def free_bytes(self, cupy):
        return cupy.cuda.runtime.memGetInfo()[0]

    def kernelspecs(self):
        """{name: argv} of the installed Jupyter kernels."""
        from jupyter_client.kernelspec import KernelSpecManager
        manager = KernelSpecManager()
        return {name: manager.get_kernel_spec(name).argv for name in manager.find_kernel_specs()}

    def kernel_python_imports_minitorch(self, python):
        """True when ``python`` (a kernel's interpreter) can import minitorch."""
        try:
            return subprocess.run([python, "-c", "import minitorch"], capture_output=True, timeout=60).returncode == 0
        except (OSError, subprocess.SubprocessError):
            return False


def _cuda(v):
    return f"{v // 1000}.{v % 1000 // 10}"


def run_checks(probe=None):
    """Run every check; return the list of :class:`Check` in order."""
    p = probe or Probe()
    checks = []
    add = checks.append
    # 1-2: the GPU and its driver
    if p.which("nvidia-smi") is None and not p.exists("/dev/nvidia0"):
        add(Check("gpu", "fail", "no NVIDIA GPU or driver on this machine (no nvidia-smi, no /dev/nvidia0)",
                  "the CPU cells of every notebook still run: read the H100 numbers in the text and in "
                  "benchmarks/results/, or use a machine with an NVIDIA GPU (a cloud GPU instance works)"))
        gpu = False
    else:
        add(Check("gpu", "ok", "an NVIDIA device is present"))
        code, text = p.nvidia_smi()
        if code != 0:
            add(Check("driver", "fail", f"nvidia-smi failed: {text.splitlines()[0] if text else code}",
                      "install or repair the NVIDIA driver (e.g. sudo apt-get install nvidia-driver-550, then "
                      "reboot); in a container, start it with --gpus all (NVIDIA Container Toolkit)"))
            gpu = False
        else:
            add(Check("driver", "ok", text.splitlines()[0] if text else "nvidia-smi answers"))
            gpu = True
    # 3-4: CuPy and the CUDA version its wheel was built for
    cupy = None
    wheels = p.cupy_wheels()
    if len(wheels) > 1:
        add(Check("cupy", "fail", f"several CuPy wheels are installed: {', '.join(wheels)} (they overwrite each other)",
                  f"pip uninstall -y {' '.join(wheels)} && pip install cupy-cuda12x   (or cupy-cuda13x for a CUDA 13 driver)"))
    else:
        try:
            cupy = p.import_cupy()
            add(Check("cupy", "ok", f"CuPy {getattr(cupy, '__version__', '?')} ({', '.join(wheels) or 'wheel unknown'})"))
        except ImportError as e:
            if not gpu:                     # installing CuPy would not help without a GPU
                add(Check("cupy", "skip", f"CuPy does not import ({e}); it is only needed with a GPU"))
            else:
                add(Check("cupy", "fail", f"CuPy does not import ({e})",
                          "pip install cupy-cuda12x   (CUDA 12 drivers; cupy-cuda13x for CUDA 13: nvidia-smi's "
                          "'CUDA Version' says which), or pip install 'minitorch-cuda-course[gpu]'"))
    if not (gpu and cupy is not None):
        for name in ("cuda runtime", "nvrtc", "memory"):
            add(Check(name, "skip", "needs a GPU, its driver and CuPy (see above)"))
    else:
        try:
            driver, runtime = p.versions(cupy)
        except Exception as e:              # cudaErrorInsufficientDriver and friends
            driver, runtime = None, None
            add(Check("cuda runtime", "fail", f"CuPy cannot talk to the driver ({type(e).__name__}: {e})",
                      "the driver is older than CuPy's CUDA: upgrade the driver, or pip uninstall -y "
                      f"{' '.join(wheels) or 'cupy'} && pip install cupy-cuda12x"))
        if driver is not None and runtime // 1000 > driver // 1000:
            add(Check("cuda runtime", "fail", f"CuPy's wheel is built for CUDA {_cuda(runtime)}, the driver supports "
                      f"CUDA {_cuda(driver)} at most",
                      f"pip uninstall -y {' '.join(wheels) or 'cupy'} && pip install cupy-cuda{driver // 1000}x   "
                      f"(or upgrade the driver to one for CUDA {runtime // 1000})"))
        elif driver is not None:
            add(Check("cuda runtime", "ok", f"CuPy's CUDA {_cuda(runtime)} on a driver for CUDA {_cuda(driver)}"))
        if driver is None or runtime // 1000 > driver // 1000:
            add(Check("nvrtc", "skip", "needs a working CUDA runtime (see above)"))
            add(Check("memory", "skip", "needs a working CUDA runtime (see above)"))
        else:
            try:
                values = p.fill_kernel()
                good = len(values) == 1000 and all(float(v) == 3.0 for v in values)
                add(Check("nvrtc", "ok" if good else "fail",
                          "compiled fill.cu with NVRTC and ran it" if good else "fill.cu ran but wrote wrong values",
                          "" if good else "report it with the output of nvidia-smi and pip list | grep cupy"))
            except Exception as e:
                add(Check("nvrtc", "fail", f"compiling or launching fill.cu failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
                          f"pip install nvidia-cuda-nvrtc-cu{runtime // 1000}   (CuPy loads the NVRTC of its own CUDA), or set "
                          "CUDA_PATH to your CUDA toolkit (export CUDA_PATH=/usr/local/cuda)"))
            try:
                free = p.free_bytes(cupy) / 2 ** 30
                ok = free >= MIN_FREE_GIB
                add(Check("memory", "ok" if ok else "fail", f"{free:.1f} GiB free on the GPU",
                          "" if ok else f"the notebooks need about {MIN_FREE_GIB:g} GiB: stop the processes nvidia-smi "
                          "lists, or pick an idle GPU: export CUDA_VISIBLE_DEVICES=1"))
            except Exception as e:
                add(Check("memory", "fail", f"cannot read free memory ({e})", "check nvidia-smi"))
    # 7: the Jupyter kernel
    try:
        specs = p.kernelspecs()
    except ImportError:
        specs = None
    if specs is None:
        add(Check("jupyter kernel", "fail", "Jupyter is not installed",
                  "pip install -e '.[course]'   (JupyterLab, ipykernel, papermill)"))
    elif not specs:
        add(Check("jupyter kernel", "fail", "no Jupyter kernel is installed",
                  f"{sys.executable} -m ipykernel install --user --name python3"))
    else:
        name = "python3" if "python3" in specs else sorted(specs)[0]
        argv = specs[name]
        python = sys.executable if not argv or argv[0] in ("python", "python3", "{python}") else argv[0]
        if p.kernel_python_imports_minitorch(python):
            add(Check("jupyter kernel", "ok", f"kernel {name!r} runs {python}, which imports minitorch"))
        else:
            add(Check("jupyter kernel", "fail", f"kernel {name!r} runs {python}, which cannot import minitorch",
                      f"{sys.executable} -m ipykernel install --user --name python3   (a kernel for this Python), "
                      "or in that Python: pip install -e '.[course]'"))
    return checks


def main(argv=None):
    """Print the report; return 0 when no check failed, else 1."""
    checks = run_checks()
    print("minitorch-course doctor:")
    for check in checks:
        print(check)
    failed = [c for c in checks if c.status == "fail"]
    print(f"\n{len(failed)} problem(s)" + (": fix them in the order above" if failed else ": ready"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
