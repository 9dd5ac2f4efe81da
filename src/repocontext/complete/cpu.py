"""What the CPU offers, and which of llama.cpp's CPU paths are safe on it.

llama.cpp can move weights at load time into "extra buffer types": a repacked layout for its
own AVX2/AVX-512 kernels (CPU_REPACK) and, when it was built on a CPU with AMX, the AMX tile
layout. The AMX path segfaults at the first decode on Sapphire Rapids class Xeons
(ggml-org/llama.cpp#20824, ollama/ollama#17205; measured here: `AMX model buffer size =
213.91 MiB`, then a crash in `ggml_backend_amx_mul_mat`). llama.cpp offers no switch for AMX
alone: `use_extra_bufts` (llama-server: `--no-repack`) turns off every extra buffer type.

So the rule, chosen by measurement (bench/results/cpu_guard.md, on a Zen 4 CPU where both
settings run): extra buffer types are off when the CPU advertises AMX and llama.cpp was built
with AMX kernels, on elsewhere. Turning them off everywhere would be simplest, and costs the
default model nothing measurable (13 MiB of its 235 MiB is repacked), but a user's own Q4_0
model loses about a quarter of its prompt speed and a third of its generation speed without
repacking. Excluding AMX alone is not something llama.cpp's API offers: the only handle,
`tensor_buft_overrides`, takes a buffer type per tensor name pattern, and the repack buffer
dereferences a null pointer when given a tensor it has no layout for. A canary (load and decode once in a child process, per
model, build and CPU) would keep AMX where it works, for about 0.9 s once; with no AMX CPU known
where it works, the rule is used. `[generation] extra_buffers = "on" | "off"` overrides it.
"""

from __future__ import annotations

import platform
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXTRA_BUFFERS = ("auto", "on", "off")
AMX_FLAGS = frozenset({"amx_tile", "amx_int8", "amx_bf16", "amx_fp16", "amx_complex"})


@dataclass(frozen=True)
class CpuFeatures:
    """The CPU as the kernel describes it (/proc/cpuinfo); empty where that cannot be read."""

    model: str = ""
    flags: frozenset[str] = field(default_factory=frozenset)

    @property
    def avx2(self) -> bool:
        return "avx2" in self.flags

    @property
    def avx512(self) -> bool:
        return "avx512f" in self.flags

    @property
    def amx(self) -> bool:
        return bool(self.flags & AMX_FLAGS)

    def summary(self) -> str:
        """ "AMD EPYC: AVX2, AVX-512, no AMX": what a person checking a bug report wants."""
        if not self.flags:
            return f"{self.model or platform.machine()}: CPU flags unknown"
        names = [name for name, on in (("AVX2", self.avx2), ("AVX-512", self.avx512)) if on]
        names.append(
            "AMX (" + ", ".join(sorted(self.flags & AMX_FLAGS)) + ")" if self.amx else "no AMX"
        )
        return f"{self.model or platform.machine()}: " + ", ".join(names)

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "avx2": self.avx2,
            "avx512": self.avx512,
            "amx": self.amx,
            "amx_flags": sorted(self.flags & AMX_FLAGS),
        }


def read_cpu_features(path: str | Path = "/proc/cpuinfo") -> CpuFeatures:
    """The first processor's model name and flags (every core of one machine is the same)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return CpuFeatures(model=platform.processor())
    return parse_cpuinfo(text)


def parse_cpuinfo(text: str) -> CpuFeatures:
    model, flags = "", frozenset[str]()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and not model:
            model = value.strip()
        elif key == "flags" and not flags:
            flags = frozenset(value.split())
        if model and flags:
            break
    return CpuFeatures(model=model, flags=flags)


def llama_system_info() -> str:
    """llama.cpp's own account of what it was built with ("AVX2 = 1 | ... | REPACK = 1")."""
    try:
        from .backends.llamacpp.native import system_info

        return system_info()
    except Exception as exc:  # not installed, or a broken build: say so, never fail status
        return f"unavailable ({type(exc).__name__}: {exc})"


@dataclass(frozen=True)
class BufferDecision:
    """Whether llama.cpp may use its extra buffer types (weight repacking, AMX), and why."""

    enabled: bool
    reason: str

    def server_args(self) -> list[str]:
        """What llama-server needs on the command line for the same protection."""
        return [] if self.enabled else ["--no-repack"]

    def to_json(self) -> dict[str, Any]:
        return {"enabled": self.enabled, "reason": self.reason}


def decide_extra_buffers(
    cpu: CpuFeatures, system_info: str = "", setting: str = "auto"
) -> BufferDecision:
    """The rule in the module docstring. `system_info` is llama.cpp's: a build without AMX
    kernels (built on another CPU) cannot take the AMX path, so it keeps repacking."""
    if setting == "on":
        return BufferDecision(True, "extra buffer types on ([generation] extra_buffers = on)")
    if setting == "off":
        return BufferDecision(False, "extra buffer types off ([generation] extra_buffers = off)")
    if cpu.amx and not _built_without_amx(system_info):
        return BufferDecision(
            False,
            "extra buffer types off: this CPU has AMX, and llama.cpp's "
            "AMX path crashes on it (ggml-org/llama.cpp#20824)",
        )
    if cpu.amx:
        return BufferDecision(
            True,
            "weight repacking on: this CPU has AMX, but this llama.cpp build has no AMX kernels",
        )
    return BufferDecision(True, "weight repacking on (no AMX on this CPU)")


def _built_without_amx(system_info: str) -> bool:
    """True only when llama.cpp's system info was read and names no AMX feature."""
    if not re.search(r"\bAVX2? = 1|\bSSE3 = 1", system_info):
        return False  # not read: assume the worst
    return re.search(r"\bAMX\w* = 1", system_info) is None


@dataclass(frozen=True)
class Machine:
    """The CPU and the llama.cpp build on it: all the extra-buffer rule looks at. Tests pass
    the description of another machine (a Sapphire Rapids Xeon) to see the rule take effect."""

    cpu: CpuFeatures
    llama_info: str

    @classmethod
    def current(cls) -> Machine:
        return cls(read_cpu_features(), llama_system_info())

    def extra_buffers(self, setting: str = "auto") -> BufferDecision:
        return decide_extra_buffers(self.cpu, self.llama_info, setting)

    def to_json(self, setting: str = "auto") -> dict[str, Any]:
        return {
            "cpu": self.cpu.to_json() | {"summary": self.cpu.summary()},
            "llama_cpp": self.llama_info,
            "extra_buffers": self.extra_buffers(setting).to_json(),
        }
