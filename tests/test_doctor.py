"""minitorch-course doctor: every check's failure path, on a CPU machine, through a fake Probe."""
import numpy as np
import pytest

from minitorch.utils import doctor


class FakeCupy:
    __version__ = "14.0.0"


class Healthy(doctor.Probe):
    """A machine where everything works: each test breaks one thing."""
    def which(self, name): return "/usr/bin/nvidia-smi"
    def exists(self, path): return True
    def nvidia_smi(self): return 0, "NVIDIA H100 80GB HBM3, 580.159.04"
    def cupy_wheels(self): return ["cupy-cuda12x"]
    def import_cupy(self): return FakeCupy()
    def versions(self, cupy): return 12080, 12060
    def fill_kernel(self): return np.full(1000, 3.0, np.float32)
    def free_bytes(self, cupy): return 70 * 2 ** 30
    def kernelspecs(self): return {"python3": ["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"]}
    def kernel_python_imports_minitorch(self, python): return True


def statuses(probe):
    return {c.name: c for c in doctor.run_checks(probe)}


def test_healthy_machine_passes_everything():
    checks = statuses(Healthy())
    assert {c.status for c in checks.values()} == {"ok"}, [str(c) for c in checks.values()]
    assert list(checks) == ["gpu", "driver", "cupy", "cuda runtime", "nvrtc", "memory", "jupyter kernel"]


def test_no_gpu_says_what_to_do_instead_and_skips_gpu_checks():
    class NoGpu(Healthy):
        def which(self, name): return None
        def exists(self, path): return False
    c = statuses(NoGpu())
    assert c["gpu"].status == "fail" and "benchmarks/results" in c["gpu"].fix
    assert c["nvrtc"].status == c["memory"].status == c["cuda runtime"].status == "skip"
    assert c["jupyter kernel"].status == "ok"
    class NoGpuNoCupy(NoGpu):
        def cupy_wheels(self): return []
        def import_cupy(self): raise ImportError("No module named 'cupy'")
    assert statuses(NoGpuNoCupy())["cupy"].status == "skip"      # not a problem without a GPU


def test_driver_failure():
    class BrokenDriver(Healthy):
        def nvidia_smi(self): return 9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"
    c = statuses(BrokenDriver())
    assert c["driver"].status == "fail" and "--gpus all" in c["driver"].fix and c["nvrtc"].status == "skip"


def test_cupy_missing_and_duplicate_wheels():
    class NoCupy(Healthy):
        def cupy_wheels(self): return []
        def import_cupy(self): raise ImportError("No module named 'cupy'")
    assert "pip install cupy-cuda12x" in statuses(NoCupy())["cupy"].fix
    class TwoWheels(Healthy):
        def cupy_wheels(self): return ["cupy-cuda12x", "cupy-cuda13x"]
    c = statuses(TwoWheels())["cupy"]
    assert c.status == "fail" and "pip uninstall -y cupy-cuda12x cupy-cuda13x" in c.fix


def test_cupy_wheel_newer_than_driver():
    class Mismatch(Healthy):
        def cupy_wheels(self): return ["cupy-cuda13x"]
        def versions(self, cupy): return 12040, 13000
    c = statuses(Mismatch())
    assert c["cuda runtime"].status == "fail"
    assert "pip uninstall -y cupy-cuda13x && pip install cupy-cuda12x" in c["cuda runtime"].fix
    assert c["nvrtc"].status == "skip"


def test_driver_unreachable_from_cupy():
    class Insufficient(Healthy):
        def versions(self, cupy): raise RuntimeError("cudaErrorInsufficientDriver")
    assert statuses(Insufficient())["cuda runtime"].status == "fail"


def test_nvrtc_failure_and_wrong_values():
    class NoNvrtc(Healthy):
        def fill_kernel(self): raise RuntimeError("libnvrtc.so.12: cannot open shared object file")
    c = statuses(NoNvrtc())["nvrtc"]
    assert c.status == "fail" and "pip install nvidia-cuda-nvrtc-cu12" in c.fix and "CUDA_PATH" in c.fix
    class Wrong(Healthy):
        def fill_kernel(self): return np.zeros(1000, np.float32)
    assert statuses(Wrong())["nvrtc"].status == "fail"


def test_low_free_memory():
    class Busy(Healthy):
        def free_bytes(self, cupy): return 2 ** 28
    c = statuses(Busy())["memory"]
    assert c.status == "fail" and "CUDA_VISIBLE_DEVICES" in c.fix


def test_jupyter_kernel_failures():
    class NoJupyter(Healthy):
        def kernelspecs(self): raise ImportError("jupyter_client")
    assert "pip install -e '.[course]'" in statuses(NoJupyter())["jupyter kernel"].fix
    class NoKernels(Healthy):
        def kernelspecs(self): return {}
    assert "ipykernel install" in statuses(NoKernels())["jupyter kernel"].fix
    class OtherPython(Healthy):
        def kernelspecs(self): return {"python3": ["/opt/other/bin/python", "-m", "ipykernel_launcher"]}
        def kernel_python_imports_minitorch(self, python): return python != "/opt/other/bin/python"
    c = statuses(OtherPython())["jupyter kernel"]
    assert c.status == "fail" and "/opt/other/bin/python" in c.detail and "ipykernel install" in c.fix


def test_doctor_command_on_this_machine(capsys):
    from minitorch.utils.course import main
    code = main(["doctor"])
    out = capsys.readouterr().out
    assert "minitorch-course doctor:" in out and "jupyter kernel" in out
    assert code in (0, 1)
