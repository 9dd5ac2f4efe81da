"""Prompt formats: which fill-in-the-middle layout a model was trained on, and the prompt itself.

Detection reads the GGUF's vocabulary and metadata (the special tokens a FIM model carries,
the model name and architecture); a model without FIM tokens gets prefix-only prompting with
the retrieved context written as comments in the file's language.

Every layout puts the retrieved context first and the code window after it: the context changes
rarely, the window's tail changes on every keystroke, so a keystroke re-evaluates only the
tail (the KV cache keeps the rest). The suffix comes after the prefix in PSM layouts, so it is
kept short (`suffix_lines` in the config).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

COMMENT_PREFIX = {
    "python": "#",
    "ruby": "#",
    "bash": "#",
    "toml": "#",
    "yaml": "#",
    "lua": "--",
    "sql": "--",
    "javascript": "//",
    "typescript": "//",
    "tsx": "//",
    "go": "//",
    "rust": "//",
    "java": "//",
    "c": "//",
    "cpp": "//",
    "csharp": "//",
    "kotlin": "//",
    "swift": "//",
    "php": "//",
    "scala": "//",
}


@dataclass(frozen=True)
class ContextFile:
    path: str
    text: str


@dataclass(frozen=True)
class PromptTemplate:
    """A FIM layout. `repo` templates name files with `file_sep`; others inline context."""

    name: str
    prefix: str = ""
    suffix: str = ""
    middle: str = ""
    spm: bool = False  # suffix before prefix
    repo_name: str = ""  # Qwen2.5-Coder repository-level format
    file_sep: str = ""
    eot: tuple[str, ...] = ()
    repo_end: str = "\n"  # what follows the repository's name (StarCoder2: nothing)
    # StarCoder2: the file's own path opens the FIM prefix (`<file_sep><fim_prefix>path\n...`)
    path_in_prefix: bool = False

    @property
    def fim(self) -> bool:
        return bool(self.prefix and (self.middle or self.spm))

    def build(
        self,
        path: str,
        language: str | None,
        prefix: str,
        suffix: str,
        context: Sequence[ContextFile],
    ) -> tuple[str, str]:
        """(head, tail): head is the stable part (context), tail the window around the cursor."""
        if self.file_sep:
            head = f"{self.repo_name}repocontext{self.repo_end}" if self.repo_name else ""
            head += "".join(f"{self.file_sep}{c.path}\n{c.text}\n" for c in context)
            if self.path_in_prefix and self.fim:
                return head + self.file_sep, self._fim(f"{path}\n{prefix}", suffix)
            head += f"{self.file_sep}{path}\n"
            if not self.fim:
                return head, prefix
            return head, self._fim(prefix, suffix)
        head = context_as_comments(path, language, context)
        if not self.fim:
            return head, prefix
        if self.spm:
            return "", f"{self.suffix}{suffix}{self.prefix}{head}{prefix}{self.middle}"
        return "", self._fim(head + prefix, suffix)

    def cursor_offset(self, prompt: str, suffix: str) -> int:
        """Where the text before the cursor ends in `prompt` (head + tail of `build` with this
        `suffix`): token healing backs up from there."""
        if not self.fim:
            return len(prompt)
        if self.spm:
            return len(prompt) - len(self.middle)
        return len(prompt) - len(self.suffix) - len(suffix) - len(self.middle)

    def _fim(self, prefix: str, suffix: str) -> str:
        if self.spm:
            return f"{self.suffix}{suffix}{self.prefix}{prefix}{self.middle}"
        return f"{self.prefix}{prefix}{self.suffix}{suffix}{self.middle}"


def context_as_comments(path: str, language: str | None, context: Sequence[ContextFile]) -> str:
    """Retrieved snippets as comments in the file's language, then the file's own path."""
    if not context:
        return ""
    mark = COMMENT_PREFIX.get(language or "", "#")
    out = []
    for c in context:
        out.append(f"{mark} {c.path}")
        out.extend(f"{mark} {line}" if line else mark for line in c.text.split("\n"))
        out.append("")
    out.append(f"{mark} {path}")
    return "\n".join(out) + "\n"


TEMPLATES: dict[str, PromptTemplate] = {
    "qwen": PromptTemplate(
        "qwen",
        "<|fim_prefix|>",
        "<|fim_suffix|>",
        "<|fim_middle|>",
        repo_name="<|repo_name|>",
        file_sep="<|file_sep|>",
        eot=("<|endoftext|>", "<|fim_pad|>", "<|file_sep|>", "<|im_end|>"),
    ),
    # StarCoder2's repository-context FIM (its paper, section 5): `<repo_name>name<file_sep>path
    # \ncode<file_sep><fim_prefix>path\nprefix<fim_suffix>suffix<fim_middle>middle<file_sep>`
    "starcoder": PromptTemplate(
        "starcoder",
        "<fim_prefix>",
        "<fim_suffix>",
        "<fim_middle>",
        repo_name="<repo_name>",
        file_sep="<file_sep>",
        eot=("<|endoftext|>", "<file_sep>"),
        repo_end="",
        path_in_prefix=True,
    ),
    # StarCoder 1's vocabulary (and Refact's, which carries it) has the FIM tokens but none for
    # repositories: file-level FIM, the context as comments
    "starcoder1": PromptTemplate(
        "starcoder1", "<fim_prefix>", "<fim_suffix>", "<fim_middle>", eot=("<|endoftext|>",)
    ),
    "codellama": PromptTemplate("codellama", "<PRE> ", " <SUF>", " <MID>", eot=("<EOT>",)),
    "deepseek": PromptTemplate(
        "deepseek",
        "<｜fim▁begin｜>",
        "<｜fim▁hole｜>",
        "<｜fim▁end｜>",
        eot=("<|EOT|>", "<｜end▁of▁sentence｜>"),
    ),
    "codegemma": PromptTemplate(
        "codegemma",
        "<|fim_prefix|>",
        "<|fim_suffix|>",
        "<|fim_middle|>",
        file_sep="<|file_separator|>",
        eot=("<|file_separator|>", "<end_of_turn>", "<eos>"),
    ),
    # [SUFFIX]suffix[PREFIX]prefix, generation right after the prefix (no middle token)
    "codestral": PromptTemplate("codestral", "[PREFIX]", "[SUFFIX]", "", spm=True, eot=("</s>",)),
    "plain": PromptTemplate("plain"),
}


# The marker strings whose presence as one special token tells the layouts apart.
_FIM_PROBES = (
    "<|fim_prefix|>",
    "<|repo_name|>",
    "<|file_separator|>",
    "<fim_prefix>",
    "<file_sep>",
    "<｜fim▁begin｜>",
    "[PREFIX]",
    "[SUFFIX]",
    "<PRE>",
    "▁<PRE>",
)


class Vocabulary(Protocol):
    """What `fim_markers` needs of a vocabulary: a loaded model's, a GGUF's read alone, or a
    llama-server's (through its /tokenize)."""

    def tokenize(self, text: str) -> list[int]: ...

    def detokenize(self, ids: list[int]) -> str: ...


def fim_markers(vocab: Vocabulary) -> set[str]:
    """Which FIM marker strings `vocab` has as single special tokens (what `detect_template`
    reads). A SentencePiece vocabulary spells a marker with its space (CodeLlama's "▁<PRE>"),
    and writes it so: the "▁" is no part of the comparison."""
    found = set()
    for probe in _FIM_PROBES:
        ids = vocab.tokenize(probe)
        if len(ids) == 1 and vocab.detokenize(ids).strip().lstrip("▁") == probe.strip("▁").strip():
            found.add(probe)
    return found


# All the probes in one text: a tokenizer that parses special tokens splits each marker it
# has out as one token (a server asked once, not once a probe)
FIM_PROBE_TEXT = "\n".join(_FIM_PROBES)


def fim_markers_in_pieces(pieces: list[str]) -> set[str]:
    """The FIM markers among the token pieces of FIM_PROBE_TEXT (the "▁" aside, as above)."""
    whole = {piece.strip().lstrip("▁") for piece in pieces}
    return {probe for probe in _FIM_PROBES if probe.strip("▁").strip() in whole}


def detect_template(tokens: set[str], metadata: dict[str, str]) -> PromptTemplate:
    """The layout for a model, from its special tokens first and its name second.

    `tokens` is the set of the vocabulary's special/control token strings; `metadata` the GGUF
    key/values (general.name, general.architecture, tokenizer.ggml.model...).
    """
    name = " ".join(
        str(metadata.get(k, ""))
        for k in ("general.name", "general.basename", "general.architecture")
    ).lower()
    if "<|fim_prefix|>" in tokens and "<|repo_name|>" in tokens:
        return TEMPLATES["qwen"]
    if "<|fim_prefix|>" in tokens and ("gemma" in name or "<|file_separator|>" in tokens):
        return TEMPLATES["codegemma"]
    if "<|fim_prefix|>" in tokens:
        return TEMPLATES["qwen"]
    if "<fim_prefix>" in tokens:
        return TEMPLATES["starcoder" if "<file_sep>" in tokens else "starcoder1"]
    if "<｜fim▁begin｜>" in tokens:
        return TEMPLATES["deepseek"]
    if "[SUFFIX]" in tokens and "[PREFIX]" in tokens:
        return TEMPLATES["codestral"]
    if "<PRE>" in tokens or "▁<PRE>" in tokens or ("codellama" in name and "<MID>" in str(tokens)):
        return TEMPLATES["codellama"]
    # FIM token ids given in metadata (llama.cpp's tokenizer.ggml.fim_*_token_id keys)
    if any(k.startswith("tokenizer.ggml.fim_pre") for k in metadata):
        if "codellama" in name:
            return TEMPLATES["codellama"]
        if "qwen" in name:
            return TEMPLATES["qwen"]
        if "starcoder" in name:
            return TEMPLATES["starcoder"]
    return TEMPLATES["plain"]


# Model names as servers give them ("qwen2.5-coder:1.5b-base", "Qwen/Qwen2.5-Coder-7B",
# "deepseek-coder-6.7b-base.Q4_K_M.gguf"), to the layout the family was trained on. A name
# matching none gets the plain layout (no FIM): set [generation] template to choose one.
_FAMILY_NAMES = (
    ("qwen", ("qwen2.5-coder", "qwen2.5coder", "qwen-coder", "qwen3-coder")),
    ("deepseek", ("deepseek-coder",)),
    ("starcoder", ("starcoder2",)),  # repository-level: <repo_name>, <file_sep>
    ("starcoder1", ("starcoder",)),  # StarCoder 1 (and Refact): file-level FIM only
    ("codellama", ("codellama", "code-llama", "code_llama")),
    ("codegemma", ("codegemma",)),
    ("codestral", ("codestral",)),
)


def template_for_name(name: str) -> PromptTemplate:
    """The layout for a model known only by its name (a server that does not show its
    vocabulary: the OpenAI API)."""
    lowered = name.lower().replace("_", "-")
    for template, needles in _FAMILY_NAMES:
        if any(n in lowered for n in needles):
            return TEMPLATES[template]
    return TEMPLATES["plain"]
