"""Which files of a root get indexed, and why the others do not.

Inside a git work tree the candidates are what git tracks plus untracked files it does not
ignore (`git ls-files --cached --others --exclude-standard`); elsewhere the tree is walked and
every .gitignore honoured through pathspec. A git tree that git cannot list (a file git
would wait on: index/git.py; git missing; git refusing the folder) is walked too, never
silently: `ScanResult.fallback` says why and what to do. Either way, vendored/build/cache
folders, lockfiles, secrets, binaries and big files are skipped, each with a reason
`repocontext status --skipped` shows, as is a folder that cannot be listed (no permission, or
a path deeper than the system lets any program open). Secrets are never read at all.

A scan also names the folders its list depends on, and git's own files: adding, removing or
renaming a file changes its folder's modification time, which is how a search tells, with a
stat per folder and no git call, that the list may have changed (index/fresh.py).
What a name alone rules out (folders, lockfiles, secrets, binary and data suffixes) is
index/skip_rules.py: tables that grow with every ecosystem, apart from the listing code here.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..terminal import printable
from .git import GitRefused, find_git_folders, run_git, tree_settings
from .reading import MAX_FILE_BYTES, RefusedFile, read_in_root, read_regular
from .skip_rules import SKIP_DIRS, path_skip_reason


@dataclass
class ScanResult:
    files: list[str] = field(default_factory=list)  # root-relative, "/"-separated
    skipped: dict[str, str] = field(default_factory=dict)  # path -> reason
    git: bool = False
    # Root-relative folders ("" is the root) in which a new, removed or renamed file could
    # change `files`, and absolute paths of files outside the tree that could (git's index
    # and its exclude file).
    folders: list[str] = field(default_factory=list)
    watch: list[str] = field(default_factory=list)
    # Why the tree was walked although it is in a git work tree (git could not list it), and
    # what to do: never silent, the list may differ from git's. "" when git listed it.
    fallback: str = ""


# The fallback of the last scan of each root in this process: the command line's index
# report says it (it gets the indexer's report, not the scan).
_fallbacks: dict[str, str] = {}


def fallback_of(root: Path) -> str:
    """Why the last scan of `root` here walked it although it is in git ("" if it did not)."""
    return _fallbacks.get(str(root), "")


def scan(root: Path) -> ScanResult:
    """Candidate files under `root` after the path rules; content checks come later."""
    result = ScanResult()
    listing = _git_files(root)
    result.git = not isinstance(listing, str)
    if isinstance(listing, str):
        if listing:
            result.fallback = (
                f"git could not list the files of {root} ({listing}); its folders were walked "
                "instead, honouring its .gitignore files but not .git/info/exclude or "
                "core.excludesFile, so the files indexed may differ from git's list"
            )
        _fallbacks[str(root)] = result.fallback
        listed, pruned, result.folders = _walk(root)
        for folder, reason in pruned.items():
            result.skipped[display_path(folder)] = reason
    else:
        _fallbacks[str(root)] = ""
        listed = listing.files
        result.folders = _git_folders(root, listed, listing.loose)
        result.watch = [
            os.path.join(listing.git_dir, "index"),
            os.path.join(listing.git_dir, "info", "exclude"),
        ]
        for folder, reason in listing.unopened.items():
            result.skipped[display_path(folder)] = reason
    seen: set[str] = set()
    linked = _LinkedFolders(root) if result.git else None
    for rel in listed:
        if rel in seen:
            continue
        seen.add(rel)
        if linked is not None and (link := linked.above(rel)):
            result.skipped[display_path(link + "/")] = (
                "symbolic link to a folder (not followed: its files are not indexed)"
            )
            continue
        why = path_skip_reason(rel)
        if why:
            result.skipped[display_path(rel)] = why
        else:
            result.files.append(rel)
    result.files.sort()
    return result


class _LinkedFolders:
    """Which folder of a listed path is a symbolic link: git's index may still list
    `etc/passwd` after `etc` became a link to `/etc`. One lstat per folder, parents first."""

    def __init__(self, root: Path):
        self.root = str(root)
        self._link: dict[str, str | None] = {"": None}  # folder -> the link at or above it

    def above(self, rel: str) -> str | None:
        return self._folder(rel.rpartition("/")[0])

    def _folder(self, folder: str) -> str | None:
        if folder in self._link:
            return self._link[folder]
        link = self._folder(folder.rpartition("/")[0])
        if link is None:
            try:
                st = os.lstat(os.path.join(self.root, folder))
                if not stat.S_ISDIR(st.st_mode):
                    link = folder
            except OSError:
                pass  # gone, or too deep to stat: the file's own stat says why
        self._link[folder] = link
        return link


def display_path(rel: str) -> str:
    """A path as the index stores it among the skipped ones: as it is, but a name that is
    not valid UTF-8 (os.fsdecode's escapes cannot be stored) in its quoted form, with its
    bytes in octal (`"caf\\351.py"`), and so is one that starts with `"`, so that no other
    name reads as a quoted one: two names are never stored alike, and
    `terminal.from_printable` gives the name back."""
    if rel.startswith('"') or any("\udc80" <= c <= "\udcff" for c in rel):
        return printable(rel)
    return rel


def stat_skip_reason(st: os.stat_result) -> str | None:
    if stat.S_ISLNK(st.st_mode):
        return "symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_size > MAX_FILE_BYTES:
        return f"larger than {MAX_FILE_BYTES // 1_000_000} MB"
    return None


@dataclass
class _GitListing:
    files: list[str]  # tracked, and untracked but not ignored
    loose: list[str]  # untracked folders git lists no file in: empty, or ignored files only
    git_dir: str
    unopened: dict[str, str] = field(default_factory=dict)  # folder "x/" -> why git could not


# git says so on standard error and lists nothing below such a folder; a message longer than
# its 4,096-byte buffer (a path deeper than PATH_MAX) is cut, reason and all.
_UNOPENED = re.compile(rb"could not open directory '([^'\n]+)(?:': ([^\n]+))?", re.MULTILINE)


def _unopened(stderr: bytes) -> dict[str, str]:
    out = {}
    for m in _UNOPENED.finditer(stderr):
        folder = os.fsdecode(m.group(1))
        if m.group(2) is None:  # cut: the deepest folder named whole, and too deep below it
            folder, reason = folder.rpartition("/")[0], _unopened_reason("File name too long")
        else:
            reason = _unopened_reason(os.fsdecode(m.group(2)))
        if folder.strip("/"):
            out[folder.rstrip("/") + "/"] = reason
    return out


def _unopened_reason(strerror: str) -> str:
    if "too long" in strerror.lower():
        return _folder_reason(OSError(errno.ENAMETOOLONG, strerror))
    if "permission" in strerror.lower():
        return _folder_reason(PermissionError(errno.EACCES, strerror))
    return _folder_reason(OSError(0, strerror))


def _git_files(root: Path) -> _GitListing | str:
    """Tracked plus untracked-not-ignored files; else why git could not list them (what to
    do too), or "" when root is in no git work tree or the enclosing repository ignores it."""
    try:
        settings = tree_settings(root)
        inside = run_git(root, "rev-parse", "--is-inside-work-tree", "--absolute-git-dir",
                         timeout=30, settings=settings)  # fmt: skip
        lines = inside.stdout.split(b"\n")
        if inside.returncode != 0 or lines[0].strip() != b"true" or len(lines) < 2:
            if inside.returncode == 0 or not _in_git(root):
                return ""  # no work tree here (a bare repository, inside .git)
            return f"{_first_line(inside.stderr)}; fix what git says"
        # A root that the enclosing repository ignores (a vendored checkout, a cache) is not
        # described by that repository's index: walk it instead.
        ignored = run_git(root, "check-ignore", "-q", "--", str(root), timeout=30,
                          settings=settings)  # fmt: skip
        if ignored.returncode == 0:
            return ""
        out = run_git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard",
                      timeout=300, check=True, settings=settings)  # fmt: skip
        # Folders that hold no listed file but where one could appear without any listed
        # folder changing: an empty one, or one of ignored files only (git lists them, "x/").
        loose = run_git(root, "ls-files", "-z", "--others", "--exclude-standard", "--directory",
                        timeout=300, check=True, settings=settings)  # fmt: skip
    except GitRefused as exc:
        return str(exc)
    except subprocess.TimeoutExpired as exc:
        return f"git did not answer in {exc.timeout:.0f} s; try again when the disk is less busy"
    except subprocess.CalledProcessError as exc:
        return f"{_first_line(exc.stderr)}; fix what git says"
    except OSError as exc:
        if not _in_git(root):
            return ""
        return f"git cannot be run ({exc.strerror or exc}); install git"
    return _GitListing(
        files=[os.fsdecode(p) for p in out.stdout.split(b"\0") if p],
        loose=[os.fsdecode(p) for p in loose.stdout.split(b"\0") if p.endswith(b"/")],
        git_dir=os.fsdecode(lines[1].strip()),
        unopened=_unopened(out.stderr),
    )


def _in_git(root: Path) -> bool:
    """Whether a `.git` is at or above root (one git would wait on counts)."""
    try:
        return find_git_folders(root) is not None
    except GitRefused:
        return True


def _first_line(stderr: bytes | None) -> str:
    """git's own words for a failure: the first line it wrote."""
    text = os.fsdecode(stderr or b"").strip()
    return text.splitlines()[0] if text else "git failed without saying why"


def _git_folders(root: Path, files: list[str], loose: list[str]) -> list[str]:
    """The folders of a git listing to watch: each listed file's folder and those above it,
    and every folder inside the loose ones; never one inside a vendored or build folder."""
    folders = {""}
    for parent in {rel.rpartition("/")[0] for rel in files}:
        while parent and parent not in folders:
            if _skip_folder(parent):
                parent = parent.rpartition("/")[0]
                continue
            folders.add(parent)
            parent = parent.rpartition("/")[0]
    for rel in loose:
        rel = rel.rstrip("/")
        if _skip_folder(rel):
            continue
        for dirpath, dirnames, _ in _iterative_walk(os.path.join(root, rel)):
            dirnames[:] = [
                d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info")
            ]
            folders.add(os.path.relpath(dirpath, root).replace(os.sep, "/"))
        while rel:
            folders.add(rel)
            rel = rel.rpartition("/")[0]
    return sorted(folders)


def _skip_folder(rel: str) -> bool:
    return any(p in SKIP_DIRS or p.endswith(".egg-info") for p in rel.split("/"))


def _walk(root: Path) -> tuple[list[str], dict[str, str], list[str]]:
    """Files below root honouring .gitignore files, the folders pruned with their reason, and
    the folders listed."""
    out: list[str] = []
    pruned: dict[str, str] = {}
    folders: list[str] = []
    unlisted: dict[str, OSError] = {}
    import pathspec  # here: only a tree outside git needs it

    specs: list[tuple[str, pathspec.PathSpec]] = []  # (dir prefix "a/b/" or "", spec)

    def ignored(rel: str, is_dir: bool) -> bool:
        probe = rel + "/" if is_dir else rel
        for prefix, spec in specs:
            if probe.startswith(prefix) and spec.match_file(probe[len(prefix) :]):
                return True
        return False

    for dirpath, dirnames, filenames in _iterative_walk(str(root), unlisted):
        rel_dir = os.path.relpath(dirpath, root)
        prefix = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
        folders.append(prefix.rstrip("/"))
        if ".gitignore" in filenames:
            try:
                data = read_in_root(root, prefix + ".gitignore", MAX_FILE_BYTES)
            except (OSError, RefusedFile):
                pass  # a link, a FIFO, unreadable: no rules from it
            else:
                lines = data[:MAX_FILE_BYTES].decode("utf-8", "replace").splitlines()
                specs.append((prefix, pathspec.GitIgnoreSpec.from_lines(lines)))
        keep = []
        for d in sorted(dirnames):
            if os.path.islink(os.path.join(dirpath, d)):
                if not ignored(prefix + d, is_dir=True):
                    pruned[prefix + d + "/"] = (
                        "symbolic link to a folder (not followed: its files are not indexed)"
                    )
            elif d in SKIP_DIRS or d.endswith(".egg-info"):
                pruned[prefix + d + "/"] = f"a vendored, build or cache folder ({d}/)"
            elif not ignored(prefix + d, is_dir=True):
                keep.append(d)
        dirnames[:] = keep
        for name in filenames:
            rel = prefix + name
            if not ignored(rel, is_dir=False):
                out.append(rel)
    for path, exc in unlisted.items():
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        if rel != ".":
            pruned[rel + "/"] = _folder_reason(exc)
    return out, pruned, folders


def _folder_reason(exc: OSError) -> str:
    """Why a folder's files are left out: it could not be listed."""
    if isinstance(exc, PermissionError):
        return "folder without read permission (files not indexed)"
    if exc.errno == errno.ENAMETOOLONG:
        return "folder too deep: its path is longer than any program can open (files not indexed)"
    return f"folder cannot be listed ({exc.strerror or exc}; files not indexed)"


def _iterative_walk(top: str, unlisted: dict[str, OSError] | None = None):
    """os.walk, top-down, without recursion (os.walk recurses before Python 3.12, and a tree a
    thousand directories deep raised RecursionError); symlinks are not followed. A directory
    that cannot be listed is passed over, and put in `unlisted` with the error when given.
    The caller may prune `dirnames` in place."""
    stack = [top]
    while stack:
        path = stack.pop()
        try:
            entries = list(os.scandir(path))
        except OSError as exc:
            if unlisted is not None:
                unlisted[path] = exc
            continue
        # as os.walk: a link to a directory is listed with the directories, never entered
        is_dir = {e.name: _is_dir(e) for e in entries}
        dirnames = sorted(n for n, d in is_dir.items() if d)
        filenames = sorted(n for n, d in is_dir.items() if not d)
        links = {e.name for e in entries if e.is_symlink()}
        yield path, dirnames, filenames
        stack.extend(os.path.join(path, d) for d in reversed(dirnames) if d not in links)


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def tree_moved(root: Path, store) -> bool:
    """Whether HEAD moved since the index was last brought up to date (a checkout, a pull),
    and the index can be written: then it must catch up before it is trusted."""
    head = git_head(root)
    return head is not None and head != store.get_meta("git_head") and not store.readonly


def git_head(root: Path) -> str | None:
    """The commit HEAD points at, read from .git directly (no subprocess on the keystroke path).
    Each file is read only if it is a regular one: a tree that arrives with a FIFO for
    `.git/HEAD` must not hang a keystroke."""

    def text(path: Path, limit: int = 4096) -> str:
        return read_regular(path, limit)[:limit].decode("utf-8", "replace")

    git = root / ".git"
    try:
        if git.is_file():  # a worktree: "gitdir: <path>"
            git = (root / text(git).split(":", 1)[1].strip()).resolve()
        head = text(git / "HEAD").strip()
        if not head.startswith("ref:"):
            return head
        ref = head.split(":", 1)[1].strip()
        ref_file = git / ref
        if ref_file.exists():
            return text(ref_file).strip()
        packed = git / "packed-refs"
        if packed.exists():
            for line in text(packed, 256 * 2**20).splitlines():
                if line.endswith(" " + ref):
                    return line.split(" ", 1)[0]
        return None
    except (OSError, RefusedFile, IndexError):
        return None
