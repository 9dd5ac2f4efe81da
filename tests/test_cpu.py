"""The AMX guard: llama.cpp's extra buffer types are off on CPUs that advertise AMX.

The machine these tests run on may not have AMX, so the guard is shown taking effect on the
description of one that does (the flags and llama.cpp system info of a Sapphire Rapids Xeon, as
an AWS m7i reports them): the real model is loaded through the real llama.cpp with that
description, and llama.cpp's own log shows where the weights went.
"""

from __future__ import annotations

import pytest

from repocontext.complete.backends.llamacpp import LlamaCppBackend
from repocontext.complete.cpu import (
    CpuFeatures,
    Machine,
    decide_extra_buffers,
    parse_cpuinfo,
    read_cpu_features,
)
from repocontext.complete.models import default_model_path
from repocontext.errors import ConfigError

# /proc/cpuinfo of an AWS m7i.large (Xeon Platinum 8488C), trimmed to the fields that matter
SAPPHIRE_RAPIDS_CPUINFO = """\
processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 143
model name\t: Intel(R) Xeon(R) Platinum 8488C
flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx \
fxsr sse sse2 ss ht syscall nx pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology nonstop_tsc \
cpuid aperfmperf tsc_known_freq pni pclmulqdq ssse3 fma cx16 pdcm pcid sse4_1 sse4_2 x2apic movbe \
popcnt tsc_deadline_timer aes xsave avx f16c rdrand hypervisor lahf_lm abm 3dnowprefetch \
invpcid_single ssbd ibrs ibpb stibp ibrs_enhanced fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms \
invpcid avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb avx512cd sha_ni avx512bw \
avx512vl xsaveopt xsavec xgetbv1 xsaves avx_vnni avx512_bf16 wbnoinvd ida arat avx512vbmi umip \
pku ospke waitpkg avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg tme \
avx512_vpopcntdq rdpid cldemote movdiri movdir64b md_clear serialize amx_bf16 avx512_fp16 \
amx_tile amx_int8 flush_l1d arch_capabilities

processor\t: 1
model name\t: Intel(R) Xeon(R) Platinum 8488C
"""
# llama.cpp's system info when built natively (-march=native) on that CPU
SAPPHIRE_RAPIDS_LLAMA = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX_VNNI = 1 | AVX2 = 1 | "
    "F16C = 1 | FMA = 1 | BMI2 = 1 | AVX512 = 1 | AVX512_VBMI = 1 | "
    "AVX512_VNNI = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | "
    "OPENMP = 1 | REPACK = 1 |"
)
ZEN4_LLAMA = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | "
    "AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | LLAMAFILE = 1 | "
    "OPENMP = 1 | REPACK = 1 |"
)
SAPPHIRE_RAPIDS = Machine(parse_cpuinfo(SAPPHIRE_RAPIDS_CPUINFO), SAPPHIRE_RAPIDS_LLAMA)


def test_cpuinfo_is_read_for_model_and_flags():
    cpu = parse_cpuinfo(SAPPHIRE_RAPIDS_CPUINFO)
    assert cpu.model == "Intel(R) Xeon(R) Platinum 8488C"
    assert cpu.avx2 and cpu.avx512 and cpu.amx
    assert "AMX (amx_bf16, amx_int8, amx_tile)" in cpu.summary()
    assert read_cpu_features("/nonexistent/cpuinfo").flags == frozenset()


def test_the_guard_turns_extra_buffers_off_where_amx_is_advertised():
    assert not SAPPHIRE_RAPIDS.extra_buffers().enabled
    assert SAPPHIRE_RAPIDS.extra_buffers().server_args() == ["--no-repack"]
    # llama.cpp's system info unreadable: assume the worst
    assert not decide_extra_buffers(SAPPHIRE_RAPIDS.cpu, "unavailable").enabled
    # a build with no AMX kernels (built on another CPU) cannot take the AMX path: repack stays
    assert decide_extra_buffers(SAPPHIRE_RAPIDS.cpu, ZEN4_LLAMA).enabled
    zen4 = CpuFeatures("AMD EPYC 9R14", frozenset({"avx2", "avx512f", "avx512_vnni"}))
    assert decide_extra_buffers(zen4, ZEN4_LLAMA).enabled
    assert decide_extra_buffers(zen4, ZEN4_LLAMA).server_args() == []
    # the user's word wins either way
    assert decide_extra_buffers(SAPPHIRE_RAPIDS.cpu, SAPPHIRE_RAPIDS_LLAMA, "on").enabled
    assert not decide_extra_buffers(zen4, ZEN4_LLAMA, "off").enabled


@pytest.fixture(scope="module")
def guarded():
    """The default model, loaded by llama.cpp as it would be on a Sapphire Rapids Xeon."""
    return LlamaCppBackend(str(default_model_path()), n_ctx=512, machine=SAPPHIRE_RAPIDS)


def test_on_an_amx_machine_llama_cpp_places_no_weight_in_an_extra_buffer(guarded):
    assert not guarded.buffers.enabled
    # llama.cpp's loader log: every weight stays in the plain CPU buffer (no CPU_REPACK, no AMX)
    assert guarded.weight_buffers, "llama.cpp's log said nothing about the weights"
    assert set(guarded.weight_buffers) <= {"CPU", "CPU_Mapped"}
    llm = guarded.llm
    llm.eval(guarded.tokenize_prompt("def add(a, b):\n    return"))
    assert llm.n_tokens > 5  # and it evaluates


def test_without_the_guard_this_build_repacks_weights_where_it_can():
    machine = Machine.current()
    backend = LlamaCppBackend(
        str(default_model_path()),
        n_ctx=512,
        extra_buffers="on",
        machine=Machine(machine.cpu, machine.llama_info),
    )
    if "REPACK = 1" not in machine.llama_info:
        pytest.skip("this llama.cpp build has no repacking")
    # the contrast to the test above: the same load with the guard off does use them here
    assert set(backend.weight_buffers) - {"CPU", "CPU_Mapped"}


def test_status_and_describe_say_what_the_cpu_offers_and_what_is_used(guarded, make_repo, cli):
    described = guarded.describe()
    assert described["cpu"]["amx"] and "AMX_INT8 = 1" in described["llama_cpp"]
    assert described["extra_buffers"]["enabled"] is False
    assert "AMX" in described["extra_buffers"]["reason"]
    root = make_repo({"a.py": "x = 1\n"})
    out = cli("status", "--root", root, "--json")
    engine = out.json()["engine"]
    assert {"cpu", "llama_cpp", "extra_buffers"} <= set(engine)
    assert {"avx2", "avx512", "amx", "summary"} <= set(engine["cpu"])
    text = cli("status", "--root", root)
    assert "cpu:" in text.out and "llama.cpp:" in text.out


def test_a_wrong_extra_buffers_setting_is_one_clear_error(tmp_path, monkeypatch):
    from repocontext.config import load_config

    path = tmp_path / "config.toml"
    path.write_text('[generation]\nextra_buffers = "maybe"\n')
    with pytest.raises(ConfigError, match="is .maybe.; use one of: auto, on, off"):
        load_config(path)
