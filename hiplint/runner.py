"""Running a scan over many files: discovery, the worker pool, fixing, progress."""
from __future__ import annotations

import os
import stat
import sys
import time
from dataclasses import dataclass, field

from hiplint.config import available_cores
from hiplint.discovery import SourcePath, discover
from hiplint.engine import FileResult, Linter, is_binary, lint_file
from hiplint.fix import SymlinkRefused, fix_bytes, unified_diff, write_atomic
from hiplint.model import Applicability, Finding
from hiplint.source import Skip, decode_input, read_bounded, restore

PARALLEL_MIN_FILES = 48  # below this a process pool costs more than it saves
# Seconds before the progress line appears (a quick scan shows none); tests set it to 0.
PROGRESS_DELAY = float(os.environ.get("HIPLINT_PROGRESS_DELAY", "0.5"))


@dataclass
class FixMode:
    enabled: bool = False
    unsafe: bool = False
    diff: bool = False  # print a diff, write nothing
    changed: object = None  # hiplint.gitdiff.ChangedLines: fix only findings on these lines (--diff-base)

    @property
    def threshold(self) -> Applicability:
        return Applicability.UNSAFE if self.unsafe else Applicability.SAFE


@dataclass
class ScanResult:
    results: list[FileResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: int = 0
    paths: list[str] = field(default_factory=list)  # every file scanned, as displayed

    @property
    def findings(self) -> list[Finding]:
        return sorted((f for r in self.results for f in r.findings), key=Finding.sort_key)

    @property
    def fixed(self) -> list[Finding]:
        return [f for r in self.results for f in getattr(r, "fixed", [])]

    @property
    def skipped(self) -> int:
        """Files not checked (each has a note saying why), and named paths that held no file to check."""
        return sum(1 for r in self.results if r.skipped) + self.empty_paths

    empty_paths: int = 0

    @property
    def internal_error(self) -> bool:
        return any(r.internal_error for r in self.results)

    @property
    def write_errors(self) -> list[str]:
        return [r.write_error for r in self.results if getattr(r, "write_error", "")]

    @property
    def diffs(self) -> list[str]:
        return [r.diff for r in self.results if getattr(r, "diff", "")]


def process_file(linter: Linter, sp: SourcePath, mode: FixMode) -> FileResult:
    if not mode.enabled and not mode.diff:
        return lint_file(linter, sp.path, sp.display, sp.language)
    first = lint_file(linter, sp.path, sp.display, sp.language)
    if first.internal_error or first.source is None or not any(f.fix for f in first.findings):
        first.fixed = []
        return first
    data = first.source.data
    only = None
    if mode.changed is not None:
        from hiplint.fix import ChangedLineSet

        lines = mode.changed.lines_of(sp.path, data.count(b"\n") + 1)
        if not lines:  # nothing in this file changed: nothing to fix
            first.fixed = []
            return first
        only = ChangedLineSet(lines)
    outcome = fix_bytes(lambda d: linter.lint_bytes(sp.display, d, sp.language, sp.path).findings, data, sp.language,
                        mode.threshold, only)
    result = linter.lint_bytes(sp.display, outcome.data, sp.language, sp.path)
    result.notes = first.notes + outcome.dropped
    if not outcome.converged:
        result.notes.append(f"{sp.display}: fixes did not converge after {outcome.passes} passes; kept the last result")
    result.fixed = outcome.applied
    if outcome.data != data:
        if mode.diff:
            result.diff = unified_diff(sp.display, data, outcome.data)
        else:
            try:
                # In the file's own encoding and line endings (UTF-16, lone `\r`): source.decode_input.
                write_atomic(sp.path, restore(outcome.data, first.encoding), expected=restore(data, first.encoding))
            except SymlinkRefused as exc:
                result.notes.append(f"{sp.display}: not written: {exc}")
                result.fixed = []
                result.findings = first.findings
            except OSError as exc:
                result.write_error = f"{sp.display}: not written: {exc.strerror or exc}"
                result.fixed = []
                result.findings = first.findings
    return result


_WORKER: dict = {}


def _die_with_parent(parent: int) -> None:
    """A worker ends when the scan that started it does (SIGTERM, SIGKILL, a crash): on Linux the
    kernel sends it SIGTERM then (PR_SET_PDEATHSIG); a parent already gone makes it exit now."""
    import signal

    # A forked worker inherits the parent's handler (_raise_on_sigterm), whose SystemExit the pool's
    # worker loop would catch and outlive: SIGTERM kills a worker outright.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        os._exit(1)


def _init_worker(settings, codes, mode, cache=None, plan_dir=None, parent=None):
    if parent is not None:
        _die_with_parent(parent)
    from hiplint.registry import load_registry
    reg = load_registry()
    _WORKER["linter"] = Linter(settings, [r for r in reg.rules if r.code in codes])
    _WORKER["linter"].plan_dir = plan_dir
    _WORKER["mode"] = mode
    _WORKER["cache"] = cache


def _work(sp: SourcePath) -> FileResult:
    return _lint_and_store(_WORKER["linter"], sp, _WORKER["mode"], _WORKER.get("cache"))


def _lint_and_store(linter: Linter, sp: SourcePath, mode: FixMode, cache) -> FileResult:
    res = process_file(linter, sp, mode)
    if cache is not None and res.source is not None and not res.internal_error and not res.skipped:
        cache.store(cache.entry_key(sp.display, sp.language, res.source.data, sp.path), res.findings, res.notes,
                    res.depends)
    res.source = None  # not kept (memory stays flat) nor pickled back; the parent re-reads sources it shows
    return res


def _raise_on_sigterm():
    """While the pool runs, SIGTERM raises SystemExit in the parent, so that it stops its workers
    before it goes; returns the function that puts the previous handler back."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def on_term(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, on_term)
    return lambda: signal.signal(signal.SIGTERM, previous)


def _stop_pool(ex) -> None:
    for proc in list((getattr(ex, "_processes", None) or {}).values()):
        try:
            proc.terminate()
        except Exception:
            pass
    ex.shutdown(wait=False, cancel_futures=True)


def _cached(cache, files: list[SourcePath]) -> tuple[list[FileResult], list[SourcePath]]:
    """Results the cache holds for unchanged files, and the files still to lint."""
    hits, misses = [], []
    for sp in files:
        try:
            if not stat.S_ISREG(os.stat(sp.path).st_mode):
                misses.append(sp)  # a pipe (`<(cmd)`) can be read once: by lint_file
                continue
            data = decode_input(read_bounded(sp.path))[0]  # as lint_file reads it, bounded
        except (OSError, Skip):
            misses.append(sp)  # lint_file reports it
            continue
        entry = cache.load(cache.entry_key(sp.display, sp.language, data, sp.path))
        if entry is None:
            misses.append(sp)
        else:
            hits.append(FileResult(sp.display, findings=entry[0], notes=entry[1]))
    return hits, misses


class Progress:
    """A one-line counter on stderr, only for a terminal and only once a scan takes a moment."""

    def __init__(self, total: int, enabled: bool):
        self.total = total
        self.enabled = enabled and total > 1
        self.start = time.monotonic()
        self.shown = False
        self.last = 0.0

    def update(self, done: int):
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < PROGRESS_DELAY or now - self.last < 0.1:
            return
        self.last = now
        self.shown = True
        sys.stderr.write(f"\rhiplint: {done}/{self.total} files")
        sys.stderr.flush()

    def close(self):
        if self.shown:
            sys.stderr.write("\r" + " " * 40 + "\r")
            sys.stderr.flush()


def _needed(entries, files: list[SourcePath]) -> list:
    """The manifest entries (hiplint.manifest) of the rules that could report in one of `files`: the
    others are never imported. Everything when a file cannot be read ahead (a pipe, an error)."""
    datas = []
    for sp in files:
        try:
            if not stat.S_ISREG(os.stat(sp.path).st_mode):
                return list(entries)  # a pipe can be read once: by lint_file
            data = decode_input(read_bounded(sp.path))[0]  # as lint_file reads it
        except Skip:
            continue  # lint_file skips it too: no rule sees it
        except OSError:
            return list(entries)
        if not is_binary(data):
            datas.append((data, sp.language))
    return [e for e in entries if any(e.needed_for(data, lang) for data, lang in datas)]


def run(paths: list[str], settings, rule_classes, mode: FixMode, progress: bool = False,
        jobs: int | None = None, use_cache: bool = False) -> ScanResult:
    """Lint every discovered file. With use_cache, unchanged files are served from the cache;
    fixing and --diff never use it (they must see the file as it is now).

    `rule_classes` may hold manifest entries (hiplint.registry.rule_index): a plain scan of a few files
    then imports only the rules those files can need."""
    from hiplint.manifest import RuleEntry, languages_of, resolve

    entries = None
    if any(isinstance(r, RuleEntry) for r in rule_classes):
        if mode.enabled or mode.diff or not all(isinstance(r, RuleEntry) for r in rule_classes):
            rule_classes = resolve(rule_classes)
        else:
            entries = list(rule_classes)
    linter = Linter(settings, rule_classes) if entries is None else None
    scan = ScanResult()
    empty: list[str] = []
    languages = linter.languages if linter is not None else languages_of(entries, settings)
    files = discover(paths, settings, languages or {"cuda"}, scan.notes, empty)
    scan.empty_paths = len(empty)
    scan.files = len(files)
    scan.paths = [sp.display for sp in files]
    cache = plan_dir = None
    if use_cache:
        from hiplint.cache import Cache
        plan_dir = Cache.plans_directory(settings)
        if not (mode.enabled or mode.diff):
            cache = Cache.for_run(settings, rule_classes)
            if cache is not None:
                scan.results, files = _cached(cache, files)
    jobs = jobs if jobs is not None else (settings.jobs or available_cores())
    parallel = jobs > 1 and len(files) >= PARALLEL_MIN_FILES
    if linter is None:
        codes = {e.code for e in entries}
        # A few files (a pre-commit hook, an editor's save): only the rules they can need are imported.
        few = not parallel and len(files) < PARALLEL_MIN_FILES
        loaded = resolve(_needed(entries, files) if few else entries)
        linter = Linter(settings, loaded, selected_codes=codes)
    linter.plan_dir = plan_dir
    bar = Progress(len(files), progress)
    if parallel:
        codes = linter.selected_codes
        # Imported here: 35 ms that a scan served from the cache, or a small one, never needs.
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        if multiprocessing.get_start_method() == "fork":
            linter.prepare()  # forked workers inherit the compiled queries instead of compiling their own
        restore_term = _raise_on_sigterm()
        try:
            with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker,
                                     initargs=(settings, codes, mode, cache, plan_dir, os.getpid())) as ex:
                try:
                    for i, res in enumerate(ex.map(_work, files, chunksize=max(1, min(32, len(files) // (jobs * 8) or 1)))):
                        scan.results.append(res)
                        bar.update(i + 1)
                except BaseException:
                    _stop_pool(ex)  # SIGTERM, Ctrl-C: the workers end now, not after their queue
                    raise
        finally:
            restore_term()
    else:
        for i, sp in enumerate(files):
            scan.results.append(_lint_and_store(linter, sp, mode, cache))
            bar.update(i + 1)
    bar.close()
    for r in scan.results:
        scan.notes.extend(r.notes)
    return scan


def run_stdin(data: bytes, filename: str, settings, rule_classes, mode: FixMode, lang: str):
    linter = Linter(settings, rule_classes)
    try:
        raw, (data, enc) = data, decode_input(data)
    except Skip as why:
        r = FileResult(filename, skipped=True)
        r.notes.append(f"{filename}: skipped: {why}")
        return r, data
    if is_binary(data):
        r = FileResult(filename, skipped=True)
        r.notes.append(f"{filename}: skipped: binary input")
        return r, raw
    if not (mode.enabled or mode.diff):
        return linter.lint_bytes(filename, data, lang), data
    outcome = fix_bytes(lambda d: linter.lint_bytes(filename, d, lang).findings, data, lang, mode.threshold)
    result = linter.lint_bytes(filename, outcome.data, lang)
    result.fixed = outcome.applied
    result.notes.extend(outcome.dropped)
    if mode.diff and outcome.data != data:
        result.diff = unified_diff(filename, data, outcome.data)
    return result, restore(outcome.data, enc)
