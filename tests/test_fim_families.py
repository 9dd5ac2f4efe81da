"""Each FIM family the project names, on its real vocabulary, through the real in-process backend.

A tiny model (tests/fim_models.py) carries llama.cpp's own vocabulary file for the family, from
the llama-cpp-python source release the project builds from (scripts/llama-sources.sh, which
scripts/test runs and exports as REPOCONTEXT_LLAMA_SOURCES). `LlamaCppBackend` loads it as the
editor does, and for each family:
(a) detection picks the family's layout;
(b) the prompt the editor would evaluate (a prefix, a suffix, two context files), with token
    healing off and on, is exactly the family's token sequence: each FIM marker, file separator
    and repository token one token, the vocabulary's own id for it;
(c) the backend stops at exactly the family's end tokens (by id);
(d) a generation writes the model's answer and stops at the family's end token (the model would
    write that token until max_tokens otherwise).

Vocabularies (vendor/llama.cpp/models/ggml-vocab-*.gguf in llama-cpp-python 0.3.36):
- DeepSeek-Coder: deepseek-coder, as it is.
- StarCoder2: starcoder (its <repo_name> and <file_sep> are StarCoder2's), as it is.
- StarCoder 1: refact, as it is (Refact-1.6B's vocabulary is StarCoder's: <fim_*>, <filename>,
  <reponame>, no <file_sep>).
- Qwen2.5-Coder: built from qwen2, which is Qwen2's (its FIM slots are [PAD]): Qwen2.5's 22 added
  tokens put in those slots, as Qwen2.5 did (tests/fim_models.py says how).
- CodeLlama: built from llama-spm (Llama 2's 32,000 pieces, no <PRE>/<SUF>/<MID>/<EOT>) with
  CodeLlama's 16 appended pieces; their SentencePiece scores are assumed, not read
  (tests/fim_models.py).
- CodeGemma: none. Its markers live in Gemma 1's vocabulary (<|fim_prefix|> 67 ...), which the
  release does not ship; gemma-4's vocabulary has no FIM token. Not tested here.
- Codestral: none (no Mistral vocabulary in the release). Not tested here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from fim_models import FAMILIES, Family, Vocabulary, tiny_model_file, vocab_file

from repocontext.complete.backends import Control
from repocontext.complete.backends.llamacpp import LlamaCppBackend
from repocontext.complete.templates import TEMPLATES, ContextFile

SOURCES = os.environ.get("REPOCONTEXT_LLAMA_SOURCES")
pytestmark = pytest.mark.skipif(
    not SOURCES,
    reason="set REPOCONTEXT_LLAMA_SOURCES to the unpacked llama-cpp-python source release "
    "(scripts/test sets it from scripts/llama-sources.sh)",
)

PATH = "app/main.py"
LINE = "    return sum"  # the line typed so far: token healing backs up " sum"
PREFIX = "import util\n\ndef total(xs):\n" + LINE
SUFFIX = "\n\nprint(total([1, 2]))\n"
CONTEXT = [
    ContextFile("app/util.py", "def add(a, b):\n    return a + b"),
    ContextFile("app/rates.py", "RATE = 0.2"),
]
COMMENTS = (
    "# app/util.py\n# def add(a, b):\n#     return a + b\n\n# app/rates.py\n# RATE = 0.2\n\n"
    "# app/main.py\n"
)


@dataclass(frozen=True)
class Token:
    """One token of the vocabulary, by its text: its id is read from the model file."""

    text: str


@dataclass(frozen=True)
class Text:
    """Plain text, tokenized as text. `space=False`: without the space SentencePiece puts
    before a text (CodeLlama's suffix follows ▁<SUF>, whose ▁ is the space before it)."""

    text: str
    space: bool = True


@dataclass(frozen=True)
class Expected:
    template: str
    layout: tuple[Token | Text, ...]
    suffix_marker: str  # the first token after the cursor
    stops: tuple[str, ...]  # the end tokens, all of them
    answer: str  # what the tiny model writes, as text


EXPECTED: dict[str, Expected] = {
    # Qwen2.5-Coder's repository-level FIM: <|repo_name|>name\n<|file_sep|>path\ncode\n ...
    # <|file_sep|>path\n<|fim_prefix|>prefix<|fim_suffix|>suffix<|fim_middle|> (no BOS)
    "qwen2.5-coder": Expected(
        "qwen",
        (
            Token("<|repo_name|>"),
            Text("repocontext\n"),
            Token("<|file_sep|>"),
            Text("app/util.py\ndef add(a, b):\n    return a + b\n"),
            Token("<|file_sep|>"),
            Text("app/rates.py\nRATE = 0.2\n"),
            Token("<|file_sep|>"),
            Text("app/main.py\n"),
            Token("<|fim_prefix|>"),
            Text(PREFIX),
            Token("<|fim_suffix|>"),
            Text(SUFFIX),
            Token("<|fim_middle|>"),
        ),
        "<|fim_suffix|>",
        ("<|endoftext|>", "<|fim_pad|>", "<|file_sep|>", "<|im_end|>"),
        "return total",
    ),
    # StarCoder2's repository-context FIM: <repo_name>name<file_sep>path\ncode<file_sep>
    # <fim_prefix>path\nprefix<fim_suffix>suffix<fim_middle> (no BOS)
    "starcoder2": Expected(
        "starcoder",
        (
            Token("<repo_name>"),
            Text("repocontext"),
            Token("<file_sep>"),
            Text("app/util.py\ndef add(a, b):\n    return a + b\n"),
            Token("<file_sep>"),
            Text("app/rates.py\nRATE = 0.2\n"),
            Token("<file_sep>"),
            Token("<fim_prefix>"),
            Text("app/main.py\n" + PREFIX),
            Token("<fim_suffix>"),
            Text(SUFFIX),
            Token("<fim_middle>"),
        ),
        "<fim_suffix>",
        ("<|endoftext|>", "<file_sep>"),
        "return total",
    ),
    # StarCoder 1 (file-level FIM, no repository tokens): the context as comments (no BOS)
    "starcoder1-refact": Expected(
        "starcoder1",
        (
            Token("<fim_prefix>"),
            Text(COMMENTS + PREFIX),
            Token("<fim_suffix>"),
            Text(SUFFIX),
            Token("<fim_middle>"),
        ),
        "<fim_suffix>",
        ("<|endoftext|>",),
        "return total",
    ),
    "deepseek-coder": Expected(
        "deepseek",
        (
            Token("<｜begin▁of▁sentence｜>"),
            Token("<｜fim▁begin｜>"),
            Text(COMMENTS + PREFIX),
            Token("<｜fim▁hole｜>"),
            Text(SUFFIX),
            Token("<｜fim▁end｜>"),
        ),
        "<｜fim▁hole｜>",
        ("<|EOT|>", "<｜end▁of▁sentence｜>"),
        "return total",
    ),
    # CodeLlama's "<PRE> {prefix} <SUF>{suffix} <MID>": [BOS, PRE] + prefix + [SUF] + suffix
    # without its leading space + [MID], as Meta's infilling_prompt_tokens builds it
    "codellama": Expected(
        "codellama",
        (
            Token("<s>"),
            Token("▁<PRE>"),
            Text(COMMENTS + PREFIX),
            Token("▁<SUF>"),
            Text(SUFFIX, space=False),
            Token("▁<MID>"),
        ),
        "▁<SUF>",
        ("▁<EOT>", "</s>"),
        " return total",
    ),
}


@dataclass
class Tiny:
    family: Family
    expected: Expected
    vocabulary: Vocabulary
    backend: LlamaCppBackend
    path: Path

    def id(self, token: str) -> int:
        return self.vocabulary.id(token)

    def text(self, part: Text) -> list[int]:
        ids = self.backend.llm.tokenize(part.text.encode("utf-8"), add_bos=False, special=False)
        if not part.space:
            assert ids[0] == self.id("▁"), "SentencePiece put no space before the text"
            ids = ids[1:]
        return ids

    def tokens(self) -> list[int]:
        out: list[int] = []
        for part in self.expected.layout:
            out += [self.id(part.text)] if isinstance(part, Token) else self.text(part)
        return out

    def prompt(self) -> str:
        head, tail = self.backend.template.build(PATH, "python", PREFIX, SUFFIX, CONTEXT)
        return head + tail


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def tiny(request) -> Tiny:
    assert SOURCES is not None
    family = FAMILIES[request.param]
    vocab = vocab_file(Path(SOURCES), family.vocab)
    assert vocab.is_file(), f"{vocab} is missing: is {SOURCES} llama-cpp-python's source release?"
    cache = request.config.cache.mkdir("fim-models")
    path, vocabulary = tiny_model_file(cache, family, vocab)
    backend = LlamaCppBackend(str(path), n_ctx=1024, threads=1)
    backend.pieces.ready(wait=True)  # token healing, as in the editor once the model is loaded
    return Tiny(family, EXPECTED[family.key], vocabulary, backend, path)


def test_detection_picks_the_familys_layout(tiny):
    assert tiny.backend.template is TEMPLATES[tiny.expected.template]


def test_the_prompt_is_the_familys_token_sequence(tiny):
    expected = tiny.tokens()
    prompt = tiny.prompt()
    assert tiny.backend.tokenize_prompt(prompt) == expected
    # the markers are the ones llama.cpp itself knows the family's FIM by
    import llama_cpp

    vocab = llama_cpp.llama_model_get_vocab(tiny.backend.llm.model)
    markers = [p.text for p in tiny.expected.layout if isinstance(p, Token)]
    assert {
        tiny.id(t) for t in markers if "fim" in t or t.strip("▁") in ("<PRE>", "<SUF>", "<MID>")
    } == {
        llama_cpp.llama_vocab_fim_pre(vocab),
        llama_cpp.llama_vocab_fim_suf(vocab),
        llama_cpp.llama_vocab_fim_mid(vocab),
    }
    # with token healing, as the editor asks: the prompt is tokenized on both sides of the
    # cursor, and the typed word's last token (" sum") is taken off to be spelled again
    control = Control(
        cursor_at=tiny.backend.template.cursor_offset(prompt, SUFFIX), heal_chars=len(LINE)
    )
    healed, healing = tiny.backend._healed(prompt, control)
    cut = expected.index(tiny.id(tiny.expected.suffix_marker)) - 1
    assert healing is not None and healing.backed_up == b" sum"
    assert tiny.backend.llm.detokenize([expected[cut]]) == b" sum"
    assert healed == expected[:cut] + expected[cut + 1 :]


def test_the_stop_tokens_are_the_familys_end_tokens(tiny):
    assert tiny.backend._eos == {tiny.id(t) for t in tiny.expected.stops}


def test_generation_stops_at_the_familys_end_token(tiny, monkeypatch):
    backend = tiny.backend
    prompt, expected = tiny.prompt(), tiny.tokens()
    answer = len(tiny.family.answer)
    gen = backend.generate(prompt, Control(max_tokens=16))
    assert (gen.status, gen.text, gen.tokens_generated) == ("ok", tiny.expected.answer, answer)
    # what was evaluated: the prompt exactly, then the answer's tokens (the end token is not)
    assert backend.llm.n_tokens == len(expected) + answer
    assert backend.llm.input_ids[: len(expected)].tolist() == expected
    # without that end token among the stops, the model writes it on to max_tokens
    end = tiny.id(tiny.family.end)
    monkeypatch.setattr(backend, "_eos", backend._eos - {end})
    assert backend.generate(prompt, Control(max_tokens=16)).tokens_generated == 16


@pytest.mark.skipif(
    not os.environ.get("REPOCONTEXT_LLAMA_SERVER"),
    reason="set REPOCONTEXT_LLAMA_SERVER (scripts/test builds and sets it)",
)
def test_a_llama_server_with_the_model_gets_the_same_layout_tokens_and_end(tiny):
    """The family through a real llama-server serving the same file: the layout is detected
    from the server's own vocabulary, the server tokenizes the prompt into the family's exact
    sequence, and its answer ends at the family's end token; through its OpenAI API too, where
    the layout comes from the model's name (the file's, as llama-server names it)."""
    from test_server import start_llama_server, stop_llama_server

    from repocontext.complete.backends.http import LlamaServerBackend, OpenAICompletionsBackend

    proc, url = start_llama_server(model=str(tiny.path))
    try:
        server = LlamaServerBackend(url)
        assert server.template is TEMPLATES[tiny.expected.template]
        prompt = tiny.prompt()
        tokens = server._post("/tokenize", {"content": prompt, "add_special": True})["tokens"]
        assert tokens == tiny.tokens()
        gen = server.generate(prompt, Control(max_tokens=16))
        assert (gen.status, gen.text) == ("ok", tiny.expected.answer)
        assert gen.tokens_generated == len(tiny.family.answer)
        openai = OpenAICompletionsBackend(url)
        assert openai.template is TEMPLATES[tiny.expected.template]
        gen = openai.generate(prompt, Control(max_tokens=16))
        assert (gen.status, gen.text) == ("ok", tiny.expected.answer)
    finally:
        stop_llama_server(proc)
