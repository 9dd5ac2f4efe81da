"""What complete/backends/llamacpp/native.py reaches past llama-cpp-python's public face is
still where it was: each C function with the argument types native.py passes, the callback
types, the parameters a load patches in, the functions and attributes it swaps or reads. A new
llama-cpp-python pin that moves or renames one fails here, by name, without a model loaded."""

from __future__ import annotations

import ctypes
import inspect
import re
from pathlib import Path

import pytest

from repocontext.complete.backends.llamacpp import native

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is part of the install")


def type_name(t: object) -> str | None:
    if t is None:
        return None
    name = getattr(t, "__name__", repr(t))
    return "size_t" if t is ctypes.c_size_t else name


@pytest.mark.parametrize("name", sorted(native.C_API))
def test_each_c_function_takes_the_types_native_passes(name):
    function = getattr(llama_cpp, name, None)
    assert function is not None, f"llama_cpp.{name} is gone"
    args, result = native.C_API[name]
    assert tuple(type_name(t) for t in function.argtypes or ()) == args
    assert type_name(function.restype) == result


@pytest.mark.parametrize("name", sorted(native.C_CALLBACKS))
def test_each_callback_type_is_the_one_native_makes(name):
    kind = getattr(llama_cpp, name, None)
    assert kind is not None and issubclass(kind, ctypes._CFuncPtr), f"llama_cpp.{name}"
    args, result = native.C_CALLBACKS[name]
    assert tuple(type_name(t) for t in kind._argtypes_) == args
    assert type_name(kind._restype_) == result


def test_native_calls_no_c_function_the_tables_do_not_name():
    source = Path(native.__file__).read_text(encoding="utf-8")
    used = set(re.findall(r"llama_cpp\.((?:llama|ggml)_\w+)", source)) - {"llama_cpp"}
    known = set(native.C_API) | set(native.C_CALLBACKS) | {"llama_token"}
    assert used <= known, f"add to native.C_API: {sorted(used - known)}"


def test_the_structs_have_the_fields_native_sets():
    model = {f[0] for f in llama_cpp.llama_model_params._fields_}
    context = {f[0] for f in llama_cpp.llama_context_params._fields_}
    batch = {f[0] for f in llama_cpp.llama_batch._fields_}
    assert set(native.MODEL_PARAMS) <= model
    assert set(native.CONTEXT_PARAMS) <= context
    assert set(native.BATCH_FIELDS) <= batch
    assert llama_cpp.llama_token is ctypes.c_int32


def test_a_load_reads_the_default_params_through_the_module_native_patches():
    """`default_params` swaps llama_cpp.llama_cpp's functions: Llama() must call them there,
    at load time, and not keep a reference of its own."""
    import llama_cpp.llama as high
    import llama_cpp.llama_cpp as low

    source = inspect.getsource(high.Llama.__init__)
    for function in ("llama_model_default_params", "llama_context_default_params"):
        assert callable(getattr(low, function))
        assert f"llama_cpp.{function}()" in source
    assert high.llama_cpp is low
    with native.model_params(use_extra_bufts=False), native.context_params(n_seq_max=2):
        assert low.llama_model_default_params().use_extra_bufts is False
        assert low.llama_context_default_params().n_seq_max == 2
    assert low.llama_model_default_params is llama_cpp.llama_model_default_params


def test_the_quiet_load_native_switches_off_is_where_it_was():
    import llama_cpp._internals as internals
    import llama_cpp.llama as high

    modules = [m for m in (high, internals) if hasattr(m, "suppress_stdout_stderr")]
    assert modules, "suppress_stdout_stderr is gone from llama_cpp.llama and _internals"
    assert "suppress_stdout_stderr" in inspect.getsource(high.Llama.__init__)
    originals = [m.suppress_stdout_stderr for m in modules]
    with native.streams_left_alone():
        assert all(m.suppress_stdout_stderr is native._Unsuppressed for m in modules)
    assert [m.suppress_stdout_stderr for m in modules] == originals


def test_the_private_attributes_native_reads_are_set_where_they_were():
    """`Llama._ctx`, `_model`, `_input_ids`, `input_ids`, `n_tokens`, `model`; the context's
    `ctx`, `memory` and sequence calls; the model's `model` and `add_bos_token`."""
    from llama_cpp import _internals
    from llama_cpp.llama import Llama

    init = inspect.getsource(Llama.__init__)
    for attribute in ("self._ctx", "self._model", "self.input_ids", "self.n_tokens"):
        assert f"{attribute} =" in init or f"{attribute}: " in init, attribute
    assert isinstance(inspect.getattr_static(Llama, "_input_ids"), property)
    assert isinstance(inspect.getattr_static(Llama, "model"), property)
    context = inspect.getsource(_internals.LlamaContext.__init__)
    assert "self.ctx = " in context and "self.memory = " in context
    calls = {
        "kv_cache_seq_rm": ["seq_id", "p0", "p1"],
        "kv_cache_seq_cp": ["seq_id_src", "seq_id_dst", "p0", "p1"],
        "kv_cache_seq_shift": ["seq_id", "p0", "p1", "shift"],
    }
    for name, params in calls.items():
        signature = inspect.signature(getattr(_internals.LlamaContext, name))
        assert list(signature.parameters)[1:] == params, name
    assert "self.model = " in inspect.getsource(_internals.LlamaModel.__init__)
    assert list(inspect.signature(_internals.LlamaModel.add_bos_token).parameters) == ["self"]
