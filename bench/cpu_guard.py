"""What the AMX guard costs: llama.cpp with its extra buffer types (weight repacking) on and
off, on this machine's CPU, in one run.

    python bench/cpu_guard.py [--rounds N] [--server PATH/TO/llama-server]
                              [--quantize PATH/TO/llama-quantize] [--out ...]

The guard (src/repocontext/complete/cpu.py) turns llama.cpp's extra buffer types off on CPUs
that advertise AMX, where the AMX path segfaults. This measures what that costs on a CPU where
both settings run: the same model (the default, gemma-3-270m Q4_K_M) loaded twice in one
process, once each way, and measured in alternation so that the machine's load hits both alike:

1. prompt evaluation: a 480-token prompt from a clean KV cache, tokens/s;
2. generation: 64 greedy tokens after it, tokens/s;
3. with `--server`, the same for llama-server with and without `--no-repack` (its timings);
4. with `--quantize`, the same in-process rows for the default model requantized with every
   weight in Q4_K and in Q4_0 (`llama-quantize --pure`): gemma-3-270m Q4_K_M keeps most of its
   weights in other types, so only 13 MiB of it is repacked, while a user's own Q4_K_M or Q4_0
   model has most of its weights in the types that llama.cpp repacks;
5. the other option the issue names, a one-time canary in a child process (load the model and
   evaluate a short prompt, so a crash kills the child and not the editor): its wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from llama_server import llama_server  # noqa: E402

from repocontext.complete.backends.llamacpp import LlamaCppBackend  # noqa: E402
from repocontext.complete.cpu import Machine  # noqa: E402
from repocontext.complete.models import default_model_path  # noqa: E402

PROMPT_TOKENS = 480
GEN_TOKENS = 64


def prompt_tokens(backend: LlamaCppBackend) -> list[int]:
    text = (REPO / "src/repocontext/complete/engine.py").read_text()
    return backend.tokenize_prompt(text)[:PROMPT_TOKENS]


def measure(backend: LlamaCppBackend, tokens: list[int]) -> tuple[float, float]:
    """(prompt tokens/s, generation tokens/s) from a clean cache."""
    llm = backend.llm
    llm.reset()
    backend._truncate(0)
    t0 = time.perf_counter()
    for i in range(0, len(tokens), 256):
        llm.eval(tokens[i : i + 256])
    prompt_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(GEN_TOKENS):
        token = llm.sample(top_k=1, top_p=1.0, min_p=0.0, temp=0.0, repeat_penalty=1.0)
        llm.eval([token])
    gen_s = time.perf_counter() - t0
    return len(tokens) / prompt_s, GEN_TOKENS / gen_s


def compare(model: Path, rounds: int):
    """(backend on, backend off, prompt tokens, rates): both loaded, measured in alternation."""
    on = LlamaCppBackend(str(model), n_ctx=2048, extra_buffers="on")
    off = LlamaCppBackend(str(model), n_ctx=2048, extra_buffers="off")
    tokens = prompt_tokens(on)
    rates: dict[str, list[tuple[float, float]]] = {"on": [], "off": []}
    measure(on, tokens)  # warm both (page in the weights) before timing
    measure(off, tokens)
    for r in range(rounds):
        order = (("on", on), ("off", off)) if r % 2 == 0 else (("off", off), ("on", on))
        for name, backend in order:
            rates[name].append(measure(backend, tokens))
            print(model.name, name, rates[name][-1], file=sys.stderr)
    return on, off, tokens, rates


def requantize(quantize_bin: str, model: Path, qtype: str) -> Path:
    out = REPO / ".bench-cache" / f"{model.stem}-pure-{qtype}.gguf"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [quantize_bin, "--allow-requantize", "--pure", str(model), str(out), qtype],
            check=True,
            capture_output=True,
        )
    return out


def server_rates(
    server_bin: str, model: Path, extra: list[str], text: str, rounds: int, threads: int
) -> tuple[list[float], list[float]]:
    with llama_server(server_bin, model, threads, extra) as port:
        url = f"http://127.0.0.1:{port}"
        prompt, gen = [], []
        for _ in range(rounds):
            body = json.dumps(
                {
                    "prompt": text,
                    "n_predict": GEN_TOKENS,
                    "cache_prompt": False,
                    "temperature": 0,
                    "top_k": 1,
                    "ignore_eos": True,
                }
            ).encode()
            req = urllib.request.Request(
                url + "/completion", body, {"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(req, timeout=120) as r:
                timings = json.loads(r.read())["timings"]
            prompt.append(timings["prompt_per_second"])
            gen.append(timings["predicted_per_second"])
        return prompt, gen


CANARY = """
import sys
sys.path.insert(0, {src!r})
from repocontext.complete.backends.llamacpp import LlamaCppBackend
b = LlamaCppBackend({model!r}, n_ctx=512, extra_buffers="on")
b.llm.eval(b.tokenize_prompt("def add(a, b):\\n    return a + b\\n" * 4))
"""


def canary_seconds(model: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", CANARY.format(src=str(REPO / "src"), model=str(model))],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--server", help="a llama-server binary, to measure --no-repack too")
    ap.add_argument("--quantize", help="a llama-quantize binary, to measure Q4_K and Q4_0 too")
    ap.add_argument("--out", default=str(HERE / "results/cpu_guard.md"))
    args = ap.parse_args()
    model = default_model_path()
    machine = Machine.current()
    if not machine.extra_buffers().enabled:
        print(
            f"{machine.cpu.summary()}: with extra buffers on, llama.cpp would crash here; run "
            "this on a CPU without AMX",
            file=sys.stderr,
        )
        return 2
    threads = os.cpu_count() or 1
    models = [("gemma-3-270m Q4_K_M (the default)", model)]
    if args.quantize:
        models += [
            (f"the same, every weight {q} (`--pure`)", requantize(args.quantize, model, q))
            for q in ("Q4_K", "Q4_0")
        ]
    results = [(label, *compare(path, args.rounds)) for label, path in models]
    first_on, tokens = results[0][1], results[0][3]
    server = None
    if args.server:
        text = first_on.llm.detokenize(tokens[1:]).decode("utf-8", "ignore")
        server = {
            name: server_rates(args.server, model, extra, text, args.rounds, threads)
            for name, extra in (("on", []), ("off", ["--no-repack"]))
        }
    canary = [canary_seconds(model) for _ in range(3)]

    lines = [
        "# The AMX guard: llama.cpp's extra buffer types on and off",
        "",
        f"Command: `python bench/cpu_guard.py --rounds {args.rounds}"
        + (f" --server {args.server}" if args.server else "")
        + (f" --quantize {args.quantize}" if args.quantize else "")
        + "`  ",
        f"Machine: {platform.machine()}, {threads} threads, {machine.cpu.summary()}, "
        f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')} "
        "(shared: compare the two columns, not absolute figures)  ",
        f"llama.cpp: `{machine.llama_info}`",
        "",
        f"Medians of {args.rounds} alternating rounds; prompt: {len(tokens)} tokens from a clean "
        f"KV cache; generation: {GEN_TOKENS} greedy tokens. With extra buffers off, every weight "
        "stays in the plain CPU buffer.",
        "",
        "| model | weights with extra buffers on | measure | on (repack) | off (the guard) "
        "| off / on |",
        "|---|---|---|---|---|---|",
    ]
    for label, b_on, _, _, rates in results:
        placed = ", ".join(f"{k} {v:.1f} MiB" for k, v in b_on.weight_buffers.items())

        def med(name: str, i: int, rates=rates) -> float:
            return statistics.median(x[i] for x in rates[name])

        lines += [
            f"| {label} | {placed} | in-process prompt tokens/s | {med('on', 0):.0f} | "
            f"{med('off', 0):.0f} | {med('off', 0) / med('on', 0):.2f} |",
            f"| | | in-process generation tokens/s | {med('on', 1):.1f} | {med('off', 1):.1f} | "
            f"{med('off', 1) / med('on', 1):.2f} |",
        ]
    if server:
        sp = {k: statistics.median(v[0]) for k, v in server.items()}
        sg = {k: statistics.median(v[1]) for k, v in server.items()}
        lines += [
            f"| gemma-3-270m Q4_K_M | | llama-server prompt tokens/s (without / with "
            f"`--no-repack`) | {sp['on']:.0f} | {sp['off']:.0f} | {sp['off'] / sp['on']:.2f} |",
            f"| | | llama-server generation tokens/s | {sg['on']:.1f} | {sg['off']:.1f} | "
            f"{sg['off'] / sg['on']:.2f} |",
        ]
    lines += [
        "",
        f"The canary option (a child process that loads the model and evaluates a short prompt, "
        f"once per model, build and CPU): {statistics.median(canary):.2f} s wall (median of 3), "
        "paid before the first suggestion of a new setup.",
        "",
        "What the rule costs on an AMX machine is the repack column against the off column on "
        "that machine; it was not measured there (none was available to this session).",
        "",
        "The rule this supports (src/repocontext/complete/cpu.py): extra buffer types off where "
        "the CPU advertises AMX and llama.cpp has AMX kernels, on everywhere else. Off everywhere "
        "would cost the default model nothing, but a model whose weights llama.cpp repacks (the "
        "Q4_0 rows) runs markedly slower without it.",
    ]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
