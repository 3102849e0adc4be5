"""The command line: `hiplint scan`, `fix`, `rule`, `rules`, `clean`, `server`, `version`.

Exit codes: 0 nothing reported (or everything fixed), 1 findings reported (or, with --diff,
something to change), 2 usage, configuration or internal error.
"""
from __future__ import annotations

import os
import sys
from dataclasses import replace

import click

from hiplint import __version__
from hiplint.config import ConfigError, Settings, load_settings, parse_version, _targets
from hiplint.languages import language_of

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
# The report formats (hiplint.emit registers them; named here so `--help` needs no import of it).
OUTPUT_FORMATS = ("full", "concise", "json", "json-lines", "sarif", "github", "gitlab", "junit", "checklist")


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
        click.option("--target", "targets", multiple=True, help="AMD architectures to port to (e.g. gfx942,gfx1100)."),
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
        click.option("--statistics", is_flag=True, help="Print how often each rule was reported instead of the findings."),
        click.option("--diff-base", metavar="REF", help="Report only findings on lines added or changed since the merge base with REF."),
        click.option("--baseline", "baseline_path", type=click.Path(), help="Report only findings this baseline file does not list."),
        click.option("--write-baseline", type=click.Path(), help="Record every current finding in this baseline file; exit 0."),
        click.option("--prune-baseline", is_flag=True, help="With --baseline: drop the entries that no longer match."),
        click.option("--no-cache", is_flag=True, help="Lint every file afresh; neither read nor write the cache."),
        click.option("--jobs", "-j", type=int, help="Worker processes (default: all cores)."),
        click.option("--no-progress", is_flag=True, help="Never show the progress line."),
        click.option("-q", "--quiet", is_flag=True, help="Print findings only: no summary, no notes."),
        click.option("--show-files", is_flag=True, help="List the files a scan would read (after excludes), and exit."),
        click.option("--show-settings", is_flag=True,
                     help="Print the settings in effect (configuration file, rules, targets), and exit."),
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
    if kw.get("rocm_version"):
        over["rocm_version"] = parse_version(kw["rocm_version"])
    for key in ("force_exclude", "respect_gitignore", "report_nvidia_branches", "fix", "unsafe_fixes", "jobs"):
        if kw.get(key) is not None:
            over[key] = kw[key]
    if kw.get("output_format"):
        from hiplint import emit  # registers formats
        if kw["output_format"] not in emit.EMITTERS:
            raise ConfigError(f"--output-format: {kw['output_format']!r} is not one of {', '.join(sorted(emit.EMITTERS))}")
        over["output_format"] = kw["output_format"]
    return settings.with_overrides(**over)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="hiplint")
def cli():
    """hiplint: find and fix what breaks when CUDA code moves to AMD GPUs (ROCm/HIP)."""


def _do_scan(paths, kw, force_fix: bool = False):
    from hiplint import emit, gate
    from hiplint.emit import Report
    from hiplint.registry import load_registry, select_rules
    from hiplint.runner import FixMode, run, run_stdin

    try:
        settings = build_settings(paths, kw)
        registry = load_registry()
        rules = select_rules(settings, registry)
    except ConfigError as exc:
        _fail(str(exc))
    fix_enabled = force_fix or bool(settings.fix)
    mode = FixMode(enabled=fix_enabled and not kw.get("diff"), unsafe=bool(settings.unsafe_fixes), diff=bool(kw.get("diff")))
    paths = list(paths) or ["."]
    quiet = kw.get("quiet")
    out_file = kw.get("output_file")
    if kw.get("show_settings"):
        click.echo(_settings_text(settings, rules), nl=False)
        return EXIT_CLEAN
    if kw.get("show_files"):
        from hiplint.discovery import discover
        from hiplint.engine import Linter

        notes: list[str] = []
        for sp in discover(paths, settings, Linter(settings, rules).languages or {"cuda"}, notes):
            click.echo(sp.display)
        for note in notes:
            click.echo(f"hiplint: {note}", err=True)
        return EXIT_CLEAN

    if paths == ["-"]:
        name = kw.get("stdin_filename") or "-"
        lang = language_of(name, settings.include) or "cuda"
        data = sys.stdin.buffer.read()
        try:
            result, fixed_data = run_stdin(data, name, settings, rules, mode, lang)
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
            return EXIT_FINDINGS if (result.findings and not kw.get("exit_zero")) else EXIT_CLEAN
        if mode.diff:
            click.echo(result.diff, nl=False)
            return EXIT_FINDINGS if result.diff and not kw.get("exit_zero") else EXIT_CLEAN
        report = Report(result.findings, 1, result.fixed, settings, sources={name: result.source} if result.source else {},
                        incomplete=result.internal_error)
        _write(emit.render(settings.output_format, report), out_file)
        return EXIT_FINDINGS if (result.findings and not kw.get("exit_zero")) else (EXIT_ERROR if result.internal_error else EXIT_CLEAN)

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
        use_cache = not kw.get("no_cache") and settings.extra.get("cache", True)
        scan = run(paths, settings, rules, mode, progress=progress, use_cache=use_cache)
    except ConfigError as exc:
        _fail(str(exc))
    if not quiet:
        for note in scan.notes:
            click.echo(f"hiplint: {note}", err=True)
    if mode.diff:
        text = "".join(scan.diffs)
        _write(text, out_file)
        if not quiet:
            n = len(scan.fixed)
            click.echo(f"Would fix {n} finding{'s' if n != 1 else ''}.", err=True)
        if scan.internal_error or missing:
            return EXIT_ERROR
        return EXIT_FINDINGS if text and not kw.get("exit_zero") else EXIT_CLEAN
    findings = scan.findings
    report = Report(findings, scan.files, scan.fixed, settings, show_fix_hint=not quiet,
                    color=(out_file is None and sys.stdout.isatty() and "NO_COLOR" not in os.environ),
                    incomplete=scan.internal_error)
    try:
        findings, wrote_baseline = gate.apply_gates(findings, scan.paths, settings, report.relpath, kw,
                                                    note=None if quiet else lambda m: click.echo(m, err=True))
    except ConfigError as exc:
        _fail(str(exc))
    report.findings = findings
    report.sources = _Sources()  # code frames, and fix edits as line/column in json
    if kw.get("statistics"):
        text = gate.statistics(findings)
    else:
        text = emit.render(settings.output_format, report)
        if quiet and settings.output_format in ("full", "concise"):
            text = "\n".join(l for l in text.splitlines() if not _is_summary(l)) + ("\n" if findings else "")
    _write(text, out_file)
    for fmt, path in reports:
        _write(emit.render(fmt, replace(report, color=False)), path)
    if scan.internal_error or missing:
        return EXIT_ERROR
    if wrote_baseline or kw.get("exit_zero"):
        return EXIT_CLEAN
    threshold = kw.get("fail_on") or settings.extra.get("fail-on", "info")
    return EXIT_FINDINGS if gate.fails(findings, threshold) else EXIT_CLEAN


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
        ("targets", value(settings.targets)),
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


def _is_summary(line: str) -> bool:
    return line.startswith(("Found ", "All checks passed", "[*] ", "Fixed ")) or " more fixable with " in line


class _Sources(dict):
    """path -> Source, read when a format first asks (`get`): the concise and machine formats
    that show no code never read a file again."""

    def get(self, path, default=None):
        if path not in self:
            from hiplint.source import Source
            try:
                with open(path, "rb") as fh:
                    self[path] = Source(path, fh.read())
            except OSError:
                self[path] = None
        value = dict.get(self, path)
        return default if value is None else value


def _write(text: str, out_file: str | None) -> None:
    if out_file:
        try:
            with open(out_file, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            _fail(f"--output-file: {out_file}: {exc.strerror}")
    else:
        click.echo(text, nl=False)


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
    """Remove the scan cache (`cache-dir`, `.hiplint_cache/` by default) of PATHS' projects."""
    import shutil

    removed = set()
    for p in list(paths) or ["."]:
        if not os.path.lexists(p):
            click.echo(f"hiplint: warning: {p}: no such file or directory", err=True)
            continue
        try:
            settings = load_settings([p], config_path)
        except ConfigError as exc:
            _fail(str(exc))
        base = settings.cache_dir if os.path.isabs(settings.cache_dir) else os.path.join(str(settings.root), settings.cache_dir)
        base = os.path.abspath(base)
        # Only a directory hiplint made (it tags its cache root) is removed.
        if base in removed or not os.path.isfile(os.path.join(base, "CACHEDIR.TAG")):
            continue
        shutil.rmtree(base, ignore_errors=True)
        removed.add(base)
        click.echo(f"Removed {os.path.relpath(base)}")
    if not removed:
        click.echo("No cache to remove.")
    sys.exit(EXIT_CLEAN)


@cli.command("rule")
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="Print every rule.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text")
def rule_cmd(code, show_all, output_format):
    """Explain a rule: what it finds, why it breaks on AMD, what to write instead."""
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
@click.option("--in-place", is_flag=True, help="Rewrite SRC itself, after a full backup to SRC.hiplint-backup/.")
@click.option("--force", is_flag=True, help="Write into a non-empty --out directory.")
@click.option("--hip-extension", is_flag=True, help="Name migrated .cu files .hip (default: keep .cu).")
@click.option("--launch-syntax", type=click.Choice(["chevron", "ggl"]), default="chevron", show_default=True,
              help="Keep <<<>>> launches (HIP supports them) or rewrite them to hipLaunchKernelGGL.")
@click.option("--no-fix", "no_fix", is_flag=True, help="Rename only; do not apply the rules' safe fixes.")
@click.option("--target", "targets", multiple=True, help="AMD architectures to port to (e.g. gfx942,gfx1100).")
@click.option("--rocm-version", help="Oldest ROCm version the port must support (e.g. 6.2).")
@click.option("--config", "config_path", type=click.Path(), help="Use this configuration file.")
@click.option("--isolated", is_flag=True, help="Ignore all configuration files.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
def migrate_cmd(src, out, in_place, force, hip_extension, launch_syntax, no_fix, quiet, **kw):
    """Write the HIP version of the CUDA tree SRC, with every safe fix applied and a checklist of what is left."""
    from hiplint.migrate import MigrateError, MigrateOptions, Migrator
    from hiplint.registry import load_registry, select_rules

    try:
        settings = build_settings([src], kw)
        rules = select_rules(settings, load_registry())
    except ConfigError as exc:
        _fail(str(exc))
    options = MigrateOptions(out=out, in_place=in_place, force=force, hip_extension=hip_extension,
                             launch_syntax=launch_syntax, apply_fixes=not no_fix)
    try:
        result = Migrator(settings, rules, options).run(src)
    except MigrateError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"{exc.filename or src}: {exc.strerror or exc}")
    if not quiet:
        for note in result.notes:
            click.echo(f"hiplint: {note}", err=True)
        click.echo(result.summary())
    sys.exit(EXIT_CLEAN)


@cli.command("server")
def server_cmd():
    """Run the language server on standard input and output (for editors; needs `hiplint[lsp]`)."""
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
