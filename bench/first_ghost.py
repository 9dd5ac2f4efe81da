"""The first ghost text on a project never indexed before, while its index and embeddings build.

    python bench/first_ghost.py [--runs N] [--busy N] [--modes one,typing]
        [--languages python,go,typescript] [--out ...]

What the editor does when a file of a new project is opened, through its own `Session`: the
index starts (lexical, then embeddings: `Session.index(embed=True)`) and the prompt is warmed
(the editor warms on BufEnter, which also loads the model). Once the embedding is under way
(its first batch done) the user types. Each run is a fresh process (a cold model, a fresh
index home) on a fresh copy of requests 2.32.3 (84 files, 811 chunks; a `pyproject.toml`, no
`.git`), in one of two ways:

- one key: a single request;
- typing: words of 4 keys 0.15 s apart with 1.5 s between words; each key is a request that
  cancels the one before, as the editor's next key does.

Measured from the first key: the first ghost text (the first streamed text of any request,
which the editor draws at once), the first complete suggestion, and the end of the
embedding. Each way is run quiet and with `--busy` processes spinning on the CPU (busy loops
bounded in time, killed at the end of each run), like the loaded machine of the report (load
about 4 on 2 cores). The table has medians over `--runs` runs.

To measure the code before a change, run this file from a checkout of that code (it imports
the package from the `src/` beside it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from requests_seed import fetch_corpus  # noqa: E402

TARGET = ("src/requests/sessions.py", 400)  # a line in the middle of a method body
KEY_INTERVAL = 0.15  # seconds between the keys of a word
WORD = 4  # keys in a word
WORD_PAUSE = 1.5  # seconds between words
GIVE_UP = 600.0  # seconds: a run that has no suggestion by then reports None


def target(language: str, root: Path) -> tuple[str, int]:
    """The file and line typed at for `language`'s corpus."""
    if language == "python":
        return TARGET
    from quality import source_files
    from savings import CORPORA

    files = source_files(root, CORPORA[language])
    path = max(files, key=lambda f: (root / f).stat().st_size)
    lines = (root / path).read_text().split("\n")
    for n in range(len(lines) // 2, len(lines)):
        code = lines[n].strip()
        if 30 <= len(code) <= 60 and not code.startswith(("//", "/*", "*", '"', "'", "`")):
            return path, n + 1
    raise SystemExit(f"no line to type in {path}")


def corpus_of(language: str) -> Path:
    if language == "python":
        return fetch_corpus("requests==2.32.3", "2.32.3")
    from quality import fetch
    from savings import CORPORA

    return fetch(CORPORA[language])


def trial(corpus: Path, mode: str, language: str = "python") -> dict:
    """One run in this process: open a fresh copy, type once the embedding is under way."""
    from repocontext.context.request import CursorRequest
    from repocontext.runtime.session import Session
    from repocontext.service import Repository

    if os.environ.get("FIRST_GHOST_DUMP"):  # stacks of every thread, now and then
        import faulthandler

        faulthandler.dump_traceback_later(float(os.environ["FIRST_GHOST_DUMP"]), repeat=True)
    trace = os.environ.get("FIRST_GHOST_TRACE")
    load_before = os.getloadavg()[0]
    work = Path(tempfile.mkdtemp(prefix="first-ghost-"))
    try:
        os.environ["REPOCONTEXT_HOME"] = str(work / "home")
        root = work / "project"
        shutil.copytree(corpus, root)
        path, line = target(language, root)
        lines = (root / path).read_text().split("\n")
        full = lines[line - 1]

        def request(typed: str) -> CursorRequest:
            text = "\n".join(lines[: line - 1] + [typed] + lines[line:])
            return CursorRequest(path, line, len(typed.encode()), text)

        session = Session(Repository(root))

        def on_loading(p: dict) -> None:  # the model is loaded: the engine can answer
            if p["state"] == "ready":
                times["warmed"] = time.monotonic()

        session.on_loading = on_loading
        embedding = threading.Event()  # the embedding has started: time for the first key
        indexed = threading.Event()
        times: dict = {}
        t0 = time.monotonic()

        def on_progress(p: dict) -> None:
            if trace:
                print(f"{time.monotonic() - t0:7.2f} {p}", file=sys.stderr, flush=True)
            if p["phase"] == "embed" and p["done"] > 0:  # a batch is done, the next one runs
                times.setdefault("embed_started", time.monotonic() - t0)
                embedding.set()

        def on_indexed(report: dict) -> None:
            times["indexed"] = time.monotonic()
            times["report"] = report
            indexed.set()

        typed = full[: len(full) // 2]
        session.index(True, on_progress, on_indexed)
        session.warm(request(typed))  # the editor's warming on BufEnter
        embedding.wait(GIVE_UP)
        shown = threading.Event()
        done = threading.Event()
        finished = threading.Event()  # a suggestion, an error, or the one key answered empty

        def on_update(text: str) -> None:
            if text and not shown.is_set():
                times["shown"] = time.monotonic()
                shown.set()

        def on_done(suggestion, error) -> None:
            if error is not None:
                times.setdefault("error", error)
                finished.set()
            elif suggestion.suggestion and suggestion.status != "cancelled":
                on_update(suggestion.suggestion)
                if not done.is_set():
                    times["done"] = time.monotonic()
                    times["status"] = suggestion.status
                    done.set()
                    finished.set()
            elif suggestion.status != "cancelled":  # an answer with nothing to show
                times["nothing"] = times.get("nothing", 0) + 1
                times.setdefault("status", f"nothing ({suggestion.status})")
                if mode == "one":  # its only key: no ghost text will come
                    finished.set()

        key = time.monotonic()
        times["first_key"] = key
        session.complete(request(typed), on_update, on_done)
        k = 0
        while mode == "typing" and not shown.is_set() and time.monotonic() - key < GIVE_UP:
            k += 1
            if shown.wait(WORD_PAUSE if k % WORD == 0 else KEY_INTERVAL):
                break
            typed = full[: len(typed) + 1] if len(typed) < len(full) else typed + " "
            if trace:
                print(f"{time.monotonic() - t0:7.2f} key {k}", file=sys.stderr, flush=True)
            session.complete(request(typed), on_update, on_done)
        if mode == "typing" and not shown.is_set():
            finished.set()  # it typed for GIVE_UP seconds and nothing came
        finished.wait(GIVE_UP)
        indexed.wait(GIVE_UP)
        session.close()

        def since_key(name: str) -> float | None:
            return round(times[name] - key, 2) if name in times else None

        return {
            "language": language,
            "place": f"{path}:{line}",
            "model_ready_s": round(times["warmed"] - key, 2) if "warmed" in times else None,
            "mode": mode,
            "load_before": round(load_before, 2),  # 1-minute load average: other jobs too
            "first_ghost_s": since_key("shown"),
            "first_suggestion_s": since_key("done"),
            "embedded_s": since_key("indexed"),
            "keys": k + 1,
            "answers_with_nothing": times.get("nothing", 0),
            "embed_started_s": round(times.get("embed_started", 0.0), 2),
            "status": times.get("status"),
            "error": times.get("error"),
            "embedded": times.get("report", {}).get("embedded"),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_trial(corpus: Path, mode: str, busy: int, language: str = "python") -> dict:
    """A trial in a child process (a cold model each time), with `busy` spinning processes
    beside it, each bounded in time and killed when the trial ends."""
    spin = (
        f"import time\nend = time.monotonic() + {GIVE_UP * 2}\nwhile time.monotonic() < end: pass"
    )
    spinners = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(busy)]
    result = Path(tempfile.mkdtemp(prefix="first-ghost-result-")) / "trial.json"
    try:
        out = subprocess.run(
            [sys.executable, __file__, "--trial", mode, "--corpus", str(corpus),
             "--language", language, "--result", str(result)],
            capture_output=True,
            text=True,
            timeout=GIVE_UP * 3,
        )  # fmt: skip
    finally:
        for p in spinners:
            p.kill()
            p.wait()
    if out.returncode != 0 or not result.exists():
        raise SystemExit(f"trial failed ({out.returncode}):\n{out.stderr[-2000:]}")
    data = json.loads(result.read_text())
    shutil.rmtree(result.parent, ignore_errors=True)
    return data


def after_ready(run: dict, name: str) -> float | None:
    """`name`'s time counted from the later of the first key and the model being ready."""
    value, ready = run.get(name), run.get("model_ready_s")
    if value is None:
        return None
    return round(value - max(0.0, ready or 0.0), 2)


def median(values) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 1) if values else None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--busy", type=int, default=2, help="spinning processes for the loaded rows")
    ap.add_argument("--modes", default="one,typing", help="which ways of typing to run")
    ap.add_argument("--languages", default="python", help="python,go,typescript")
    ap.add_argument("--label", default="", help="what code this measures (for the table)")
    ap.add_argument("--out", default=str(HERE / "results/first_ghost.md"))
    ap.add_argument("--json", help="also write every run's figures here")
    ap.add_argument("--trial", choices=("one", "typing"), help=argparse.SUPPRESS)
    ap.add_argument("--corpus", help=argparse.SUPPRESS)
    ap.add_argument("--language", default="python", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.trial:
        # to a file: llama.cpp points the process's stdout at /dev/null while it loads a model
        result = trial(Path(args.corpus), args.trial, args.language)
        Path(args.result).write_text(json.dumps(result))
        return 0
    languages = args.languages.split(",")
    corpora = {language: corpus_of(language) for language in languages}
    runs: dict[tuple[str, str, int], list[dict]] = {}
    for r in range(args.runs):
        for language in languages:
            for busy in (0, args.busy) if args.busy else (0,):
                for mode in args.modes.split(","):
                    res = run_trial(corpora[language], mode, busy, language)
                    runs.setdefault((language, mode, busy), []).append(res)
                    print(f"run {r + 1} {language} busy={busy} {mode}: {res}", file=sys.stderr,
                          flush=True)  # fmt: skip
                    if args.json:  # after every run: a long bench that is stopped keeps them
                        Path(args.json).write_text(
                            json.dumps({"/".join(map(str, k)): v for k, v in runs.items()})
                        )
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
    model = next((ln.split(":", 1)[1].strip() for ln in cpu if ln.startswith("Model name")), "?")
    rows = [
        f"| {lang} ({v[0]['place']}) | {'busy x' + str(b) if b else 'quiet'} | {m} | "
        f"{median(x['model_ready_s'] for x in v)} | "
        f"{median(after_ready(x, 'first_ghost_s') for x in v)} | "
        f"{median(x['first_ghost_s'] for x in v)} | {median(x['first_suggestion_s'] for x in v)} "
        f"| {median(x['embedded_s'] for x in v)} | "
        f"{', '.join(str(x['first_ghost_s']) for x in v)} |"
        for (lang, m, b), v in runs.items()
    ]
    lines = [
        f"Code: {args.label or 'this checkout'}. Times in seconds from the first key; `model "
        "ready`: when the warming that loads the model ended (negative: before the first key); "
        "`after ready`: the first ghost text counted from the later of the first key and the "
        "model being ready.",
        "",
        "| project (place) | load | typing | model ready | first ghost after ready "
        "| first ghost text | first complete suggestion | all embedded | first ghost, each run |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
    ]
    header = [
        f"Command: `python bench/first_ghost.py --runs {args.runs} --busy {args.busy} "
        f"--modes {args.modes} --languages {args.languages}"
        + (f" --label '{args.label}'" if args.label else "")
        + "`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, {model}, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}",
        "",
        "```",
        *cpu[:10],  # lscpu | head
        "```",
        "",
    ]
    text = "\n".join(header + lines) + "\n"
    print(text)
    if args.out != "-":
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
