"""Tiny GGUF models around real vocabularies, for the FIM family tests (tests/test_fim_families.py).

Each model copies every `tokenizer.*` key of one of llama.cpp's own vocabulary files
(vendor/llama.cpp/models/ggml-vocab-*.gguf in the llama-cpp-python source release the project
builds from: scripts/llama-sources.sh): the tokens, scores, token types, merges, special ids,
pre-tokenizer and add_bos/add_eos flags, as the family's converted model carries them. Around it:
a one-layer "llama" with n_embd 64 whose generation is chosen, not random.

With the attention output and FFN down projections zero, the hidden state after each token is
that token's embedding, so the output rows make a bigram table: every token's embedding is one
unit vector (ordinary tokens share dimension 0; the FIM middle marker and each token of the
chosen answer have their own), and each output row answers exactly one of them. After the
middle marker the model writes the answer's tokens one after the other, then the family's end
token; after any other token, the end token again. A backend that did not stop at the end token
would write it until max_tokens.

Two families are not in llama.cpp's vocabulary files and are built here, as their makers built
them (`Family.added`), from the real vocabulary they extend:
- Qwen2.5-Coder: `ggml-vocab-qwen2.gguf` is Qwen2's (151,643 BPE tokens and merges, then
  <|endoftext|>, <|im_start|>, <|im_end|>, then [PAD] up to 151,936). Qwen2.5 kept that BPE
  vocabulary and those three, and put its other 19 added tokens (object, box, vision, tool, FIM
  and repository tokens) in the first [PAD] slots, 151,646-151,664, typed as
  convert_hf_to_gguf.py types them (<|...|> CONTROL, <tool_call> USER_DEFINED); add_bos_token
  is false, as Qwen2.5-Coder's GGUFs have it.
- CodeLlama: `ggml-vocab-llama-spm.gguf` is Llama 2's 32,000 SentencePiece pieces. CodeLlama
  appended 16 pieces (32,000-32,015: the steps ▁<SU ... ▁<EOT by which SentencePiece merges
  " <SUF>" into one piece, then ▁<PRE> 32,007, ▁<SUF> 32,008, ▁<MID> 32,009, ▁<EOT> 32,010, then
  ▁<EOT> repeated). Their scores are not published anywhere this test can read: they carry on
  Llama 2's own rule (piece i scores 259 - i), which orders them after every Llama 2 merge. The
  four markers are CONTROL with score -1000 and tokenizer.ggml.eot_token_id is 32,010, as
  convert_hf_to_gguf.py writes a CodeLlama (its added_tokens_decoder marks them special).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

N_EMBD = 64
N_HEAD = 4
N_FF = 64
CONTROL, USER_DEFINED, NORMAL = 3, 4, 1


@dataclass(frozen=True)
class Family:
    """One FIM family: which vocabulary file, what the converted model says about itself, what
    the tiny model writes after the middle marker and which end token closes it."""

    key: str
    vocab: str  # ggml-vocab-<vocab>.gguf
    name: str  # general.name (detection reads it with basename and architecture)
    basename: str
    middle: str  # the token after which the answer starts (the prompt's last token)
    answer: tuple[str, ...]  # the answer's tokens, as vocabulary strings
    end: str  # the end token the model writes after the answer
    # constructed families: id -> (token, token type)
    added: dict[int, tuple[str, int]] = field(default_factory=dict)
    extra_uint32: dict[str, int] = field(default_factory=dict)
    extra_bool: dict[str, bool] = field(default_factory=dict)
    constructed: str = ""  # why it is built rather than read as it is ("" = read as it is)


QWEN25_ADDED = (
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<tool_call>",
    "</tool_call>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|fim_pad|>",
    "<|repo_name|>",
    "<|file_sep|>",
)
CODELLAMA_ADDED = (
    "▁<SU",
    "▁<SUF",
    "▁<PRE",
    "▁<M",
    "▁<MID",
    "▁<E",
    "▁<EOT",
    "▁<PRE>",
    "▁<SUF>",
    "▁<MID>",
    "▁<EOT>",
    "▁<EOT><EOT>",
    "▁<EOT><EOT><EOT>",
    "▁<EOT><EOT><EOT><EOT>",
    "▁<EOT><EOT><EOT><EOT><EOT>",
    "▁<EOT><EOT><EOT><EOT><EOT><EOT>",
)
CODELLAMA_MARKERS = {"▁<PRE>", "▁<SUF>", "▁<MID>", "▁<EOT>"}

FAMILIES: dict[str, Family] = {
    "qwen2.5-coder": Family(
        "qwen2.5-coder",
        "qwen2",
        name="Qwen2.5 Coder 0.5B",
        basename="Qwen2.5-Coder",
        middle="<|fim_middle|>",
        answer=("return", "Ġtotal"),
        end="<|file_sep|>",
        added={
            151646 + i: (t, USER_DEFINED if "tool_call" in t else CONTROL)
            for i, t in enumerate(QWEN25_ADDED)
        },
        extra_bool={"tokenizer.ggml.add_bos_token": False},
        constructed="Qwen2's real vocabulary with Qwen2.5's 22 added tokens in their slots",
    ),
    "deepseek-coder": Family(
        "deepseek-coder",
        "deepseek-coder",
        name="Deepseek Coder 1.3b Base",
        basename="deepseek-coder",
        middle="<｜fim▁end｜>",
        answer=("return", "Ġtotal"),
        end="<|EOT|>",
    ),
    "starcoder2": Family(
        "starcoder2",
        "starcoder",
        name="Starcoder2 3b",
        basename="starcoder2",
        middle="<fim_middle>",
        answer=("return", "Ġtotal"),
        end="<file_sep>",
    ),
    # StarCoder 1's special tokens (<fim_*>, <filename>, <reponame>, no <file_sep>): llama.cpp
    # ships them in Refact-1.6B's vocabulary, which is StarCoder's with 64 [PAD] slots after it
    "starcoder1-refact": Family(
        "starcoder1-refact",
        "refact",
        name="Refact 1.6B fim",
        basename="Refact",
        middle="<fim_middle>",
        answer=("return", "Ġtotal"),
        end="<|endoftext|>",
    ),
    "codellama": Family(
        "codellama",
        "llama-spm",
        name="CodeLlama 7b Hf",
        basename="CodeLlama",
        middle="▁<MID>",
        answer=("▁return", "▁total"),
        end="▁<EOT>",
        added={
            32000 + i: (t, CONTROL if t in CODELLAMA_MARKERS else NORMAL)
            for i, t in enumerate(CODELLAMA_ADDED)
        },
        extra_uint32={"tokenizer.ggml.eot_token_id": 32010},
        constructed="Llama 2's real vocabulary with CodeLlama's 16 appended pieces",
    ),
}


def vocab_file(sources: Path, vocab: str) -> Path:
    return sources / "vendor" / "llama.cpp" / "models" / f"ggml-vocab-{vocab}.gguf"


@dataclass
class Vocabulary:
    """The `tokenizer.*` key/values of a vocabulary file, as the family's model carries them."""

    values: dict[str, tuple[Any, list[int]]]  # key -> (value, GGUF value types)
    tokens: list[str]

    def id(self, token: str) -> int:
        return self.tokens.index(token)


def read_vocabulary(path: Path, family: Family) -> Vocabulary:
    import gguf

    reader = gguf.GGUFReader(path)
    values: dict[str, tuple[Any, list[int]]] = {}
    for key, f in reader.fields.items():
        if key.startswith("tokenizer."):
            values[key] = (f.contents(), [int(t) for t in f.types])
    if family.added:
        tokens = list(values["tokenizer.ggml.tokens"][0])
        types = list(values["tokenizer.ggml.token_type"][0])
        scores = (
            list(values["tokenizer.ggml.scores"][0]) if "tokenizer.ggml.scores" in values else None
        )
        for i, (text, kind) in sorted(family.added.items()):
            if i == len(tokens):  # appended (CodeLlama): Llama 2's rule, piece i scores 259 - i
                tokens.append(text)
                types.append(kind)
                if scores is not None:
                    scores.append(float(259 - i))
            else:  # in a [PAD] slot (Qwen2.5)
                assert tokens[i].startswith("[PAD"), (i, tokens[i])
                tokens[i], types[i] = text, kind
            if scores is not None and kind == CONTROL:
                scores[i] = -1000.0  # what convert_hf_to_gguf.py gives an added special token
        values["tokenizer.ggml.tokens"] = (tokens, values["tokenizer.ggml.tokens"][1])
        values["tokenizer.ggml.token_type"] = (types, values["tokenizer.ggml.token_type"][1])
        if scores is not None:
            values["tokenizer.ggml.scores"] = (scores, values["tokenizer.ggml.scores"][1])
    for key, number in family.extra_uint32.items():
        values[key] = (number, [int(gguf.GGUFValueType.UINT32)])
    for key, flag in family.extra_bool.items():
        values[key] = (flag, [int(gguf.GGUFValueType.BOOL)])
    return Vocabulary(values, list(values["tokenizer.ggml.tokens"][0]))


def write_fim_model(vocab_path: Path, out: Path, family: Family) -> Vocabulary:
    """Write the family's tiny model to `out`; its vocabulary as written."""
    import gguf

    vocabulary = read_vocabulary(vocab_path, family)
    n_vocab = len(vocabulary.tokens)
    middle = vocabulary.id(family.middle)
    answer = [vocabulary.id(t) for t in family.answer]
    end = vocabulary.id(family.end)
    chain = [middle, *answer]
    assert len(set(chain + [end])) == len(chain) + 1, "the bigram chain needs distinct tokens"

    embd = np.zeros((n_vocab, N_EMBD), dtype=np.float32)
    embd[:, 0] = 1.0  # every ordinary token: dimension 0
    output = np.zeros((n_vocab, N_EMBD), dtype=np.float32)
    for k, token in enumerate(chain, start=1):
        embd[token] = 0.0
        embd[token, k] = 1.0
        # after chain[k-1] comes chain[k]; after the last one, the end token
        follower = chain[k] if k < len(chain) else end
        output[follower, k] = 4.0  # RMS-normed one-hot is 8: a logit of 32, every other 0
    output[end, 0] = 4.0  # after any ordinary token (or the end token itself): the end token

    tmp = out.with_name(out.name + ".part")  # written whole, then put in place
    writer = gguf.GGUFWriter(str(tmp), "llama")
    writer.add_name(family.name)
    writer.add_basename(family.basename)
    writer.add_context_length(4096)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(1)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_vocab_size(n_vocab)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    for key, (value, types) in vocabulary.values.items():
        vtype = gguf.GGUFValueType(types[0])
        sub = gguf.GGUFValueType(types[-1]) if vtype == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(key, value, vtype, sub)

    ones = np.ones(N_EMBD, dtype=np.float32)
    square = np.zeros((N_EMBD, N_EMBD), dtype=np.float32)
    writer.add_tensor("token_embd.weight", embd.astype(np.float16))
    writer.add_tensor("output_norm.weight", ones)
    writer.add_tensor("output.weight", output.astype(np.float16))
    writer.add_tensor("blk.0.attn_norm.weight", ones)
    for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
        writer.add_tensor(f"blk.0.{name}.weight", square)
    writer.add_tensor("blk.0.ffn_norm.weight", ones)
    writer.add_tensor("blk.0.ffn_gate.weight", np.zeros((N_FF, N_EMBD), dtype=np.float32))
    writer.add_tensor("blk.0.ffn_up.weight", np.zeros((N_FF, N_EMBD), dtype=np.float32))
    writer.add_tensor("blk.0.ffn_down.weight", np.zeros((N_EMBD, N_FF), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    os.replace(tmp, out)
    return vocabulary


def tiny_model_file(cache: Path, family: Family, vocab: Path) -> tuple[Path, Vocabulary]:
    """The family's tiny model and its vocabulary's tokens, written once per vocabulary file
    and writer (below); the tokens are kept beside it (reading them back from
    the GGUF takes seconds)."""
    digest = hashlib.sha256(vocab.read_bytes())
    digest.update((Path(__file__).parent / "fim_models.py").read_bytes())
    path = cache / f"{family.key}-{digest.hexdigest()[:16]}.gguf"
    tokens = path.with_suffix(".tokens.json")
    if not (path.exists() and tokens.exists()):
        for old in cache.glob(f"{family.key}-*"):  # written by another writer or vocabulary
            old.unlink()
        vocabulary = write_fim_model(vocab, path, family)
        tokens.write_text(json.dumps(vocabulary.tokens), encoding="utf-8")
    return path, Vocabulary({}, json.loads(tokens.read_text(encoding="utf-8")))
