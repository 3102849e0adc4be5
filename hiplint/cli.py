"""The command line: `hiplint scan`, `fix`, `rule`, `rules`, `clean`, `server`, `version`.

Exit codes: 0 nothing reported (or everything fixed), 1 findings reported (or, with --diff,
something to change; or, with --fail-on-skipped, a file skipped unchecked), 2 usage, configuration
or internal error.
"""
from __future__ import annotations

import os
import stat
import sys
from dataclasses import replace

import click

from hiplint import __version__
from hiplint.config import BUILD_TARGETS, ConfigError, Settings, available_cores, load_settings, parse_version, _targets
from hiplint.languages import language_of

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
# The report formats (hiplint.emit registers them; named here so `--help` needs no import of it).
OUTPUT_FORMATS = ("full", "concise", "json", "json-lines", "sarif", "github", "gitlab", "junit", "checklist", "html")


def _split(values) -> tuple[str, ...]:
    out = []
    for v in values or ():
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return tuple(out)


def _fail(message: str) -> None:
    click.echo(f"hiplint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def scan_options(fn):
    opts = [
        click.argument("paths", nargs=-1, type=click.Path()),
        click.option("--fix/--no-fix", "fix", default=None, help="Apply safe fixes."),
        click.option("--unsafe-fixes/--no-unsafe-fixes", default=None, help="Also apply unsafe fixes (with --fix or --diff)."),
        click.option("--diff", is_flag=True, help="Print a unified diff of the fixes; write nothing. Exit 1 if anything would change."),
        click.option("--stdin-filename", help="Name of the file piped on standard input (with `-`)."),
        click.option("--select", multiple=True, help="Rules to enable: codes, prefixes, names or ALL (comma-separated)."),
        click.option("--extend-select", multiple=True, help="Rules to enable on top of the selection."),
        click.option("--ignore", multiple=True, help="Rules to disable."),
        click.option("--exclude", multiple=True, help="Globs to exclude, replacing the configured list."),
        click.option("--extend-exclude", multiple=True, help="Globs to exclude on top of the configured list."),
        click.option("--force-exclude/--no-force-exclude", default=None, help="Apply exclusions to files named on the command line too."),
        click.option("--respect-gitignore/--no-respect-gitignore", default=None, help="Skip files that .gitignore ignores (default: yes)."),
        click.option("--target", "targets", multiple=True, help="AMD architectures to port to (e.g. gfx942,gfx1100), or `build`: those the project's build lists."),
        click.option("--rocm-version", help="Oldest ROCm version the port must support (e.g. 6.2)."),
        click.option("--report-nvidia-branches", is_flag=True, default=None, help="Also report code that only compiles for NVIDIA: #if branches, and CUDA back-end files with a HIP twin."),
        click.option("--config", "config_path", type=click.Path(), help="Use this configuration file."),
        click.option("--isolated", is_flag=True, help="Ignore all configuration files."),
        click.option("--output-format", "output_format", metavar="FORMAT",
                     help=f"One of: {', '.join(OUTPUT_FORMATS)} (default: full)."),
        click.option("-o", "--output-file", type=click.Path(), help="Write the report to this file."),
        click.option("--report", "reports", multiple=True, metavar="FMT=PATH",
                     help="Also write a report in format FMT to PATH (repeatable), from the same scan."),
        click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings are reported."),
        click.option("--fail-on", type=click.Choice(["error", "warning", "info"]),
                     help="Exit 1 only for findings at or above this severity (default: info, i.e. any)."),
        click.option("--fail-on-skipped", is_flag=True, default=None,
                     help="Exit 1 when a file was skipped unchecked (too large, binary, too deep...) or a named path held no file to check."),
        click.option("--statistics", is_flag=True, help="Print how often each rule was reported instead of the findings."),
        click.option("--diff-base", metavar="REF", help="Report only findings on lines added or changed since the merge base with REF."),
        click.option("--baseline", "baseline_path", type=click.Path(), help="Report only findings this baseline file does not list."),
        click.option("--write-baseline", type=click.Path(), help="Record every current finding in this baseline file; exit 0."),
        click.option("--prune-baseline", is_flag=True, help="With --baseline: drop the entries that no longer match."),
        click.option("--no-cache", is_flag=True, help="Lint every file afresh; neither read nor write the cache."),
        click.option("--jobs", "-j", type=int, help="Worker processes (default: all cores)."),
        click.option("--no-progress", is_flag=True, help="Never show the progress line."),
        click.option("--color", "color", type=click.Choice(["auto", "always", "never"]), default="auto",
                     help="Color the full and concise formats: auto (default: on a terminal, unless NO_COLOR is set; "
                          "FORCE_COLOR turns it on), always or never."),
        click.option("-q", "--quiet", is_flag=True, help="Print findings only: no summary, no notes."),
        click.option("--show-files", is_flag=True, help="List the files a scan would read (after excludes), and exit."),
        click.option("--show-settings", is_flag=True,
                     help="Print the settings in effect (configuration file, rules, targets), and exit."),
        click.option("--show-build", is_flag=True,
                     help="Print what hiplint learned from the project's own AMD build (build files, sources "
                          "compiled as HIP, definitions, NVIDIA-only build files), and exit."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


def build_settings(paths, kw) -> Settings:
    settings = load_settings(list(paths), kw.get("config_path"), kw.get("isolated", False))
    over = {}
    if kw.get("select"):
        over["select"] = _split(kw["select"])
    if kw.get("extend_select"):
        over["extend_select"] = settings.extend_select + _split(kw["extend_select"])
    if kw.get("ignore"):
        over["ignore"] = settings.ignore + _split(kw["ignore"])
    if kw.get("exclude"):
        over["exclude"] = _split(kw["exclude"])
    if kw.get("extend_exclude"):
        over["extend_exclude"] = settings.extend_exclude + _split(kw["extend_exclude"])
    if kw.get("targets"):
        over["targets"] = _targets(list(_split(kw["targets"])))
        over["targets_source"] = "--target"
        if over["targets"] == (BUILD_TARGETS,):
            over["targets"], over["targets_source"] = settings.targets, BUILD_TARGETS
    if kw.get("rocm_version"):
        over["rocm_version"] = parse_version(kw["rocm_version"])
    for key in ("force_exclude", "respect_gitignore", "report_nvidia_branches", "fix", "unsafe_fixes", "jobs"):
        if kw.get(key) is not None:
            over[key] = kw[key]
    if kw.get("jobs") is None and settings.jobs > available_cores():
        # `jobs = 40` in a repository's configuration must not start 41 processes on 2 cores: the
        # configured number is capped at the cores this process may use (--jobs is taken as given).
        over["jobs"] = available_cores()
    if kw.get("output_format"):
        from hiplint import emit  # registers formats
        if kw["output_format"] not in emit.EMITTERS:
            raise ConfigError(f"--output-format: {kw['output_format']!r} is not one of {', '.join(sorted(emit.EMITTERS))}")
        over["output_format"] = kw["output_format"]
    settings = settings.with_overrides(**over)
    if settings.targets_source == BUILD_TARGETS:
        # `targets = "build"`: the architectures the project's own AMD build lists. Not the default: a
        # build's list is often a fallback for a user's choice (RELION builds gfx906 when HIP_ARCH is
        # unset), and narrowing to it would hide what breaks on the GPUs people actually use.
        from hiplint.amdbuild import declared_targets, root_of

        roots = {root_of(p) for p in paths if p != "-"} if paths else {root_of(".")}
        declared, where = declared_targets(roots.pop()) if len(roots) == 1 else ((), "")
        settings = settings.with_overrides(targets=declared or settings.targets,
                                           targets_source=where or "default: the build lists no AMD architectures")
    return settings


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="hiplint")
def cli():
    """hiplint: find and fix what breaks when CUDA code moves to AMD GPUs (ROCm/HIP)."""


def _do_scan(paths, kw, force_fix: bool = False):
    from hiplint import emit, gate
    from hiplint.emit import Report
    from hiplint.manifest import resolve
    from hiplint.registry import rule_index, select_rules
    from hiplint.runner import FixMode, run, run_stdin

    try:
        settings = build_settings(paths, kw)
        # Manifest entries where it can (hiplint.manifest): `run` imports only the rules a few files need.
        registry = rule_index()
        rules = select_rules(settings, registry)
    except ConfigError as exc:
        _fail(str(exc))
    fix_enabled = force_fix or bool(settings.fix)
    fail_skipped = bool(kw.get("fail_on_skipped") or settings.extra.get("fail-on-skipped", False))
    mode = FixMode(enabled=fix_enabled and not kw.get("diff"), unsafe=bool(settings.unsafe_fixes), diff=bool(kw.get("diff")))
    if (mode.enabled or mode.diff) and kw.get("diff_base") and paths != ("-",) and list(paths) != ["-"]:
        # --fix --diff-base: fix only what the change touched, like the findings it reports.
        from hiplint.gitdiff import changed_lines
        try:
            mode.changed = changed_lines(kw["diff_base"])
        except ConfigError as exc:
            _fail(str(exc))
    paths = list(paths) or ["."]
    quiet = kw.get("quiet")
    out_file = kw.get("output_file")
    if kw.get("show_settings"):
        click.echo(_settings_text(settings, rules), nl=False)
        return EXIT_CLEAN
    if kw.get("show_build"):
        from hiplint import amdbuild

        roots = []
        for p in paths:
            root = amdbuild.root_of(p)
            if root not in roots:
                roots.append(root)
                click.echo(amdbuild.for_path(p).describe(), nl=False)
        return EXIT_CLEAN
    if kw.get("show_files"):
        from hiplint.discovery import discover
        from hiplint.engine import Linter

        notes: list[str] = []
        try:
            classes = resolve(rules)
        except ConfigError as exc:
            _fail(str(exc))
        for sp in discover(paths, settings, Linter(settings, classes).languages or {"cuda"}, notes):
            click.echo(sp.display)
        for note in notes:
            click.echo(f"hiplint: {note}", err=True)
        return EXIT_CLEAN

    if paths == ["-"]:
        name = kw.get("stdin_filename") or "-"
        lang = language_of(name, settings.include) or "cuda"
        from hiplint.source import MAX_FILE_BYTES
        data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            click.echo(f"hiplint: {name}: skipped: more than {MAX_FILE_BYTES // (1024 * 1024)} MiB on standard input", err=True)
            if mode.enabled:
                return EXIT_ERROR  # no fixed source to give back: the editor keeps its buffer
            return EXIT_FINDINGS if fail_skipped and not kw.get("exit_zero") else EXIT_CLEAN
        try:
            result, fixed_data = run_stdin(data, name, settings, resolve(rules), mode, lang)
        except ConfigError as exc:
            _fail(str(exc))
        except Exception as exc:  # never a traceback
            _fail(f"{name}: internal error: {type(exc).__name__}: {exc}")
        for note in result.notes:
            click.echo(f"hiplint: {note}", err=True)
        if mode.enabled:
            # Editor integration: the fixed source on stdout, what remains on stderr.
            sys.stdout.buffer.write(fixed_data)
            sys.stdout.flush()
            for f in result.findings:
                click.echo(f"{f.path}:{f.line}:{f.column}: {f.code} {f.message}", err=True)
            return EXIT_FINDINGS if ((result.findings or (fail_skipped and result.skipped)) and not kw.get("exit_zero")) else EXIT_CLEAN
        if mode.diff:
            click.echo(result.diff, nl=False)
            return EXIT_FINDINGS if (result.diff or (fail_skipped and result.skipped)) and not kw.get("exit_zero") else EXIT_CLEAN
        report = Report(result.findings, 1, result.fixed, settings, sources={name: result.source} if result.source else {},
                        incomplete=result.internal_error, skipped=int(result.skipped))
        if not _write(emit.render(settings.output_format, report), out_file):
            return EXIT_ERROR
        if result.internal_error:
            return EXIT_ERROR
        return EXIT_FINDINGS if ((result.findings or (fail_skipped and result.skipped)) and not kw.get("exit_zero")) else EXIT_CLEAN

    # A named path that does not exist is a usage error (exit 2, after scanning the others): a CI gate
    # whose directory was renamed must not pass as "nothing found".
    # A dangling or looping symbolic link is as unreadable as a missing path (os.path.exists follows it).
    missing = [p for p in paths if p != "-" and not os.path.exists(p)]
    for p in missing:
        what = "broken symbolic link" if os.path.islink(p) else "no such file or directory"
        click.echo(f"hiplint: error: {p}: {what}", err=True)
    paths = [p for p in paths if p not in missing]
    if not paths:
        return EXIT_ERROR
    progress = (not kw.get("no_progress")) and sys.stderr.isatty()
    try:
        reports = gate.parse_report_specs(kw.get("reports"))
        _check_outputs(paths, settings, kw)
        use_cache = not kw.get("no_cache") and settings.extra.get("cache", True)
        scan = run(paths, settings, rules, mode, progress=progress, use_cache=use_cache)
    except ConfigError as exc:
        _fail(str(exc))
    if not quiet:
        for note in scan.notes:
            click.echo(f"hiplint: {note}", err=True)
    for error in scan.write_errors:  # a fix that was not written is an error, whatever -q says
        click.echo(f"hiplint: error: {error}", err=True)
    if mode.diff:
        text = "".join(scan.diffs)
        written = _write(text, out_file)
        if not quiet:
            n = len(scan.fixed)
            click.echo(f"Would fix {n} finding{'s' if n != 1 else ''}.", err=True)
        if scan.skipped and not quiet:
            click.echo(f"Skipped, not checked: {scan.skipped} file(s) or path(s) (see the notes above).", err=True)
        if scan.internal_error or missing or not written:
            return EXIT_ERROR
        return EXIT_FINDINGS if (text or (fail_skipped and scan.skipped)) and not kw.get("exit_zero") else EXIT_CLEAN
    findings = scan.findings
    report = Report(findings, scan.files, scan.fixed, settings, show_fix_hint=not quiet,
                    color=_use_color(kw.get("color"), out_file),
                    incomplete=scan.internal_error, skipped=scan.skipped)
    record: dict = {}
    try:
        findings, wrote_baseline = gate.apply_gates(findings, scan.paths, settings, report.relpath, kw,
                                                    note=None if quiet else lambda m: click.echo(m, err=True),
                                                    record=record)
    except ConfigError as exc:
        _fail(str(exc))
    if not wrote_baseline:
        from hiplint.engine import merge_directory_groups
        findings = merge_directory_groups(findings, _directory_grouped(rules, {f.code for f in findings}))
    report.findings = findings
    report.baseline = record.get("baseline")
    report.sources = _Sources()  # code frames, and fix edits as line/column in json
    if wrote_baseline:
        n, files = len(findings), len({f.path for f in findings})
        if not quiet:
            click.echo(f"hiplint: wrote {n} finding{'' if n == 1 else 's'} in {files} file{'' if files == 1 else 's'} "
                       f"to baseline {kw['write_baseline']}")
        return EXIT_ERROR if (scan.internal_error or missing) else EXIT_CLEAN
    if kw.get("statistics"):
        text = gate.statistics(findings, settings.output_format)
    else:
        text = emit.render(settings.output_format, report)
        if quiet and settings.output_format in ("full", "concise"):
            text = "\n".join(l for l in text.splitlines() if not _is_summary(l)) + ("\n" if findings else "")
    written = _write(text, out_file, color=report.color)
    for fmt, path in reports:
        written &= _write(emit.render(fmt, replace(report, color=False)), path, f"--report {fmt}")
    if scan.internal_error or missing or scan.write_errors or not written:
        return EXIT_ERROR
    if wrote_baseline or kw.get("exit_zero"):
        return EXIT_CLEAN
    threshold = kw.get("fail_on") or settings.extra.get("fail-on", "info")
    return EXIT_FINDINGS if gate.fails(findings, threshold) or (fail_skipped and scan.skipped) else EXIT_CLEAN


def _directory_grouped(rules, reported: set) -> set:
    """Codes of the rules that reported something and ask for one finding per directory
    (`group_by_directory`). Manifest entries stand for rule classes: only those rules are loaded."""
    out = set()
    for r in rules:
        if r.code not in reported:
            continue
        try:
            cls = r if isinstance(r, type) else r.load()
        except (ImportError, AttributeError):
            continue  # an engine-reported code (HL...) has no class to ask
        if getattr(cls, "group_by_directory", False):
            out.add(r.code)
    return out


def _settings_text(settings: Settings, rules) -> str:
    """The resolved settings, in the configuration file's own spelling (`--show-settings`)."""
    import json

    def plain(v):
        if isinstance(v, (frozenset, set)):
            return sorted(plain(x) for x in v)
        if isinstance(v, (tuple, list)):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        return v if isinstance(v, (bool, int, float, str)) or v is None else str(getattr(v, "value", v))

    def value(v):
        return json.dumps(plain(v))

    rows = [
        ("configuration", str(settings.config_path) if settings.config_path else "none (defaults)"),
        ("root", str(settings.root)),
        ("select", "default" if settings.select is None else value(settings.select)),
        ("extend-select", value(settings.extend_select)),
        ("ignore", value(settings.ignore)),
        ("per-file-ignores", value(settings.per_file_ignores)),
        ("severity", value(settings.severity)),
        ("targets", value(settings.targets) + ("" if settings.targets_source in ("default", "configuration", "--target")
                                               else f"  # {settings.targets_source}" if settings.targets_source.startswith("default")
                                               else f"  # from {settings.targets_source}")),
        ("wave-sizes", value(settings.wave_sizes)),
        ("rocm-version", value(".".join(map(str, settings.rocm_version)))),
        ("report-nvidia-branches", value(settings.report_nvidia_branches)),
        ("hip-macros", value(settings.hip_macros)),
        ("include", value(settings.include)),
        ("exclude", value(settings.exclude)),
        ("extend-exclude", value(settings.extend_exclude)),
        ("respect-gitignore", value(settings.respect_gitignore)),
        ("force-exclude", value(settings.force_exclude)),
        ("fix", value(settings.fix)),
        ("unsafe-fixes", value(settings.unsafe_fixes)),
        ("output-format", value(settings.output_format)),
        ("jobs", value(settings.jobs or "all cores")),
        ("cache-dir", value(settings.cache_dir)),
    ]
    rows += [(k, value(v)) for k, v in sorted(settings.extra.items())]
    rows += [(f"rule-options.{code}", value(opts)) for code, opts in sorted(settings.rule_options.items())]
    codes = sorted(r.code for r in rules)
    rows.append((f"rules enabled ({len(codes)})", " ".join(codes)))
    width = max(len(k) for k, _ in rows)
    return "".join(f"{k:<{width}} = {v}\n" for k, v in rows)


def _use_color(choice: str | None, out_file: str | None) -> bool:
    """--color always|never wins; auto: NO_COLOR (set, not empty) turns color off, then FORCE_COLOR (set,
    not empty, not 0/false) turns it on for standard output, else color only on a terminal."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if out_file is not None:
        return False
    force = os.environ.get("FORCE_COLOR")
    if force is not None and force.strip().lower() not in ("", "0", "false", "no"):
        return True
    return sys.stdout.isatty()


def _is_summary(line: str) -> bool:
    return line.startswith(("Found ", "All checks passed", "[*] ", "Fixed ")) or " more fixable with " in line


class _Sources(dict):
    """path -> Source, read when a format first asks (`get`): the concise and machine formats
    that show no code never read a file again."""

    def get(self, path, default=None):
        if path not in self:
            from hiplint.source import Source
            from hiplint.source import Skip, decode_input, read_bounded
            try:
                # As the scan read it (bounded; UTF-16 decoded), with a short wait for a stream.
                self[path] = Source(path, decode_input(read_bounded(path, timeout=1))[0])
            except (OSError, Skip):
                self[path] = None
        value = dict.get(self, path)
        return default if value is None else value


def _write(text: str, out_file: str | None, what: str = "--output-file", color: bool = False) -> bool:
    """The report on stdout, or in `out_file`, written atomically. False (after one line on stderr,
    which -q does not hide) when it could not be written: the caller exits 2."""
    if not out_file:
        # click strips escape sequences off a pipe unless told the color is wanted (--color, FORCE_COLOR).
        click.echo(text, nl=False, color=True if color else None)
        return True
    try:
        write_report(out_file, text)
    except OSError as exc:
        click.echo(f"hiplint: error: {what}: {out_file}: not written: {exc.strerror or exc}", err=True)
        return False
    return True


def write_report(path: str, text: str) -> None:
    """A regular file is replaced atomically (a temporary file beside it, then a rename): a full disk
    leaves the previous report as it was, never an empty or half one that CI would publish. A device
    or pipe (`-o /dev/stdout`) is written as it is."""
    from hiplint.fix import replace_file

    data = text.encode("utf-8")
    target = os.path.realpath(path)  # a link to a report: replace what it points to, keep the link
    if os.path.exists(target) and not os.path.isfile(target):
        if os.path.isdir(target):
            raise IsADirectoryError(21, "is a directory", path)
        with open(target, "wb") as fh:
            fh.write(data)
        return
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        umask = os.umask(0o22)
        os.umask(umask)
        mode = 0o666 & ~umask
    replace_file(target, data, mode)


def _check_outputs(paths: list[str], settings: Settings, kw) -> None:
    """Refuse a report path that is one of the inputs, or a file a scanned directory would include:
    `--report sarif=kernel.cu` must not overwrite the source it scans."""
    from hiplint import gate

    targets = [("--output-file", kw.get("output_file"))]
    targets += [(f"--report {fmt}=", path) for fmt, path in gate.parse_report_specs(kw.get("reports"))]
    inputs = [os.path.realpath(p) for p in paths if p != "-" and os.path.exists(p)]
    for opt, target in targets:
        if not target:
            continue
        real = os.path.realpath(target)
        for inp in inputs:
            inside = os.path.isdir(inp) and os.path.commonpath([inp, real]) == inp and real != inp
            if real == inp or (inside and language_of(real, settings.include) is not None):
                sep = "" if opt.endswith("=") else " "
                raise ConfigError(f"{opt}{sep}{target}: is a file this scan reads; refusing to overwrite it "
                                  f"with a report (write the report somewhere else)")


@cli.command("scan")
@scan_options
def scan_cmd(paths, **kw):
    """Scan PATHS (files or directories; default: .) for code that breaks on AMD GPUs."""
    sys.exit(_do_scan(paths, kw))


@cli.command("check", hidden=True)
@scan_options
def check_cmd(paths, **kw):
    """Alias of `scan`."""
    sys.exit(_do_scan(paths, kw))


@cli.command("fix")
@scan_options
def fix_cmd(paths, **kw):
    """Apply fixes to PATHS: the short form of `hiplint scan --fix`."""
    sys.exit(_do_scan(paths, kw, force_fix=True))


@cli.command("clean")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--config", "config_path", type=click.Path(), help="Use this configuration file.")
def clean_cmd(paths, config_path):
    """Remove the scan cache (`cache-dir`, `.hiplint_cache/` by default) of PATHS' projects.

    Only what hiplint made goes: the tagged directory's version subdirectories and its own files, and
    the directory itself when nothing else is in it (hiplint.cache.clean_cache)."""
    from hiplint.cache import cache_root, clean_cache, is_cache_dir

    removed, failed = set(), False
    for p in list(paths) or ["."]:
        if not os.path.lexists(p):
            click.echo(f"hiplint: warning: {p}: no such file or directory", err=True)
            continue
        try:
            base = cache_root(load_settings([p], config_path))
        except ConfigError as exc:
            click.echo(f"hiplint: error: {exc}", err=True)
            failed = True
            continue
        if base in removed or not os.path.isdir(base) or not is_cache_dir(base):
            continue
        removed.add(base)
        try:
            kept = clean_cache(base)
        except OSError as exc:
            click.echo(f"hiplint: error: {os.path.relpath(base)}: not removed: {exc.strerror or exc}", err=True)
            failed = True
            continue
        if kept:
            click.echo(f"Removed the cache entries in {os.path.relpath(base)}; kept the directory: it also holds "
                       f"{', '.join(kept[:5])}{' ...' if len(kept) > 5 else ''}, which hiplint did not make")
        else:
            click.echo(f"Removed {os.path.relpath(base)}")
    if not removed and not failed:
        click.echo("No cache to remove.")
    sys.exit(EXIT_ERROR if failed else EXIT_CLEAN)


@cli.command("rule")
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="Print every rule.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text")
def rule_cmd(code, show_all, output_format):
    """Explain a rule: what it finds, why it breaks on AMD, what to write instead. A family prefix
    (`hiplint rule WRP`) lists the family's rules."""
    import json
    from hiplint.docs import rule_markdown, rule_metadata
    from hiplint.registry import load_registry

    try:
        registry = load_registry()
    except ConfigError as exc:
        _fail(str(exc))
    if show_all:
        rules = list(registry.rules)
    elif code:
        r = registry.by_name_or_code(code)
        family = [x for x in registry.rules if x.code.upper().startswith(code.upper())] if r is None and code.isalpha() else []
        if r is None and family:
            # A family prefix (`hiplint rule WRP`): its codes and summaries, one a line.
            if output_format == "json":
                click.echo(json.dumps([rule_metadata(x) for x in family], indent=2))
            else:
                width = max(len(x.code) for x in family)
                for x in family:
                    click.echo(f"{x.code:<{width}}  {x.name:<32} {x.summary}")
            return
        if r is None:
            _fail(f"unknown rule {code!r} (see `hiplint rules`)")
        rules = [r]
    else:
        _fail("name a rule code, e.g. `hiplint rule WRP001`, or pass --all")
    if output_format == "json":
        data = [rule_metadata(r) for r in rules]
        click.echo(json.dumps(data if show_all else data[0], indent=2))
    else:
        click.echo("\n\n".join(rule_markdown(r) for r in rules))


@cli.command("rules")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text")
def rules_cmd(output_format):
    """List every rule with its code, name, severity and whether it is on by default."""
    import json
    from hiplint.docs import rule_metadata
    from hiplint.registry import load_registry

    try:
        registry = load_registry()
    except ConfigError as exc:
        _fail(str(exc))
    if output_format == "json":
        click.echo(json.dumps([rule_metadata(r) for r in registry.rules], indent=2))
        return
    for r in registry.rules:
        fix = {"always": "[*]", "sometimes": "[*]"}.get(r.fix_availability, "   ")
        on = "" if (r.default_enabled and r.pack in ("builtin", "hiplint")) else "  (opt-in)"
        pack = "" if r.pack in ("builtin", "hiplint") else f"  [{r.pack}]"
        click.echo(f"{r.code:8} {fix} {r.severity.value:7} {r.name:40} {r.summary}{on}{pack}")


@cli.command("migrate")
@click.argument("src", type=click.Path(exists=True, file_okay=False))
@click.option("--out", "out", type=click.Path(file_okay=False), help="Write the HIP tree here (must be empty unless --force).")
@click.option("--in-place", is_flag=True, help="Rewrite SRC itself, after a verified full backup to SRC.hiplint-backup/ beside it.")
@click.option("--force", is_flag=True, help="Write into a non-empty --out directory.")
@click.option("--hip-extension", is_flag=True, help="Name migrated .cu files .hip (default: keep .cu).")
@click.option("--launch-syntax", type=click.Choice(["chevron", "ggl"]), default="chevron", show_default=True,
              help="Keep <<<>>> launches (HIP supports them) or rewrite them to hipLaunchKernelGGL.")
@click.option("--no-fix", "no_fix", is_flag=True, help="Rename only; do not apply the rules' safe fixes.")
@click.option("--unsafe-fixes", "unsafe_fixes", is_flag=True,
              help="Apply the unsafe fixes too (they change behaviour or a signature: review the result).")
@click.option("--target", "targets", multiple=True, help="AMD architectures to port to (e.g. gfx942,gfx1100), or `build`: those the project's build lists.")
@click.option("--rocm-version", help="Oldest ROCm version the port must support (e.g. 6.2).")
@click.option("--config", "config_path", type=click.Path(), help="Use this configuration file.")
@click.option("--isolated", is_flag=True, help="Ignore all configuration files.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
def migrate_cmd(src, out, in_place, force, hip_extension, launch_syntax, no_fix, unsafe_fixes, quiet, **kw):
    """Write the HIP version of the CUDA tree SRC, with every safe fix applied and a checklist of what is left."""
    from hiplint.migrate import MigrateError, MigrateOptions, Migrator
    from hiplint.registry import load_registry, select_rules

    try:
        settings = build_settings([src], kw)
        rules = select_rules(settings, load_registry())
    except ConfigError as exc:
        _fail(str(exc))
    options = MigrateOptions(out=out, in_place=in_place, force=force, hip_extension=hip_extension,
                             launch_syntax=launch_syntax, apply_fixes=not no_fix, unsafe_fixes=unsafe_fixes)
    migrator = Migrator(settings, rules, options)
    if not quiet:
        migrator.progress = _migrate_progress()
    try:
        result = migrator.run(src)
    except MigrateError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"{exc.filename or src}: {exc.strerror or exc}")
    if not quiet:
        for note in result.notes:
            click.echo(f"hiplint: {note}", err=True)
        click.echo(result.summary())
    for error in result.errors:  # files left unmigrated: an error, whatever -q says
        click.echo(f"hiplint: error: {error}", err=True)
    sys.exit(EXIT_ERROR if result.errors else EXIT_CLEAN)


MIGRATE_PROGRESS_EVERY = 100  # files between two progress lines in a log (HIPLINT_PROGRESS_EVERY)


def _migrate_progress():
    """On a terminal, one counter rewritten in place; in a log (stderr not a terminal), a line every
    MIGRATE_PROGRESS_EVERY files and one for the last, so a long CI job shows it is moving."""
    tty = sys.stderr.isatty()
    try:
        every = max(1, int(os.environ.get("HIPLINT_PROGRESS_EVERY", MIGRATE_PROGRESS_EVERY)))
    except ValueError:
        every = MIGRATE_PROGRESS_EVERY

    def show(done: int, total: int) -> None:
        if tty:
            end = "\n" if done == total else ""
            click.echo(f"\rhiplint: migrating {done}/{total} files", err=True, nl=False)
            if end:
                click.echo("", err=True)
        elif done % every == 0 or (done == total and total >= every):
            click.echo(f"hiplint: migrated {done}/{total} files", err=True)
    return show


@cli.command("server")
def server_cmd():
    """Run the language server on standard input and output (for editors; needs pygls: the `lsp` extra)."""
    from hiplint.server import main as server_main

    sys.exit(server_main())


@cli.command("version")
def version_cmd():
    """Print hiplint's version and its grammar's."""
    from hiplint.cparse import GRAMMAR_VERSION
    click.echo(f"hiplint {__version__} ({GRAMMAR_VERSION})")


def main():
    try:
        cli(standalone_mode=False)
    except click.exceptions.UsageError as exc:
        exc.show()
        sys.exit(EXIT_ERROR)
    except click.exceptions.Abort:
        sys.exit(EXIT_ERROR)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_ERROR)
    except ConfigError as exc:
        click.echo(f"hiplint: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    except BrokenPipeError:
        sys.exit(EXIT_CLEAN)
    except KeyboardInterrupt:
        click.echo("hiplint: interrupted", err=True)
        sys.exit(EXIT_ERROR)
    except Exception as exc:  # never a traceback for the user; one line and exit 2
        click.echo(f"hiplint: internal error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(EXIT_ERROR)
