"""Latency of `hiplint server`: didChange -> publishDiagnostics, once the server is warm.

    python bench/lsp_latency.py [--runs 30] [--warmup 3] [--debounce-ms 0]

Starts the server over stdio with pygls' client, opens each document, lints it a few times to warm
it (imports, rule registry, compiled queries), then sends N full-text changes (each adds one comment
line, so every change is a new text) and times each until the diagnostics for that version arrive.
Prints the median and the 90th percentile per document, and the in-process median of
`Linter.lint_bytes` on the same text, wall and CPU (what the server spends linting; the rest is the
protocol; on a loaded machine CPU is the steadier figure).
The editor's debounce (300 ms by default) comes on top; `--debounce-ms 0` (the default here) leaves
it out to measure the work itself.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def documents() -> dict[str, str]:
    from corpus import make_file

    typical = (ROOT / "fixtures" / "warp" / "reduction_kernels.cu").read_text(encoding="utf-8")
    rng = random.Random(7)
    parts, lines, i = [], 0, 0
    while lines < 1000:
        text = make_file(i, rng)
        parts.append(text)
        lines += text.count("\n")
        i += 1
    # Whole generated files (a cut inside a function would add parse errors a real file does not have).
    return {"typical kernel file": typical, "1,000-line file": "".join(parts)}


async def measure(name: str, text: str, runs: int, warmup: int, debounce_ms: int, workdir: Path) -> list[float]:
    from lsprotocol import types
    from pygls.lsp.client import LanguageClient

    client = LanguageClient("hiplint-bench", "1")
    got: dict[int, float] = {}
    event = asyncio.Event()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params):
        if params.version is not None:
            got[params.version] = time.perf_counter()
            event.set()

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    await client.start_io(sys.executable, "-m", "hiplint", "server", cwd=str(workdir), env=env)
    await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities(),
                                                         root_uri=workdir.as_uri(),
                                                         initialization_options={"debounceMs": debounce_ms}))
    client.initialized(types.InitializedParams())
    uri = (workdir / "doc.cu").as_uri()

    async def until(version: int):
        while version not in got:
            event.clear()
            await asyncio.wait_for(event.wait(), 300)

    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="cuda", version=1, text=text)))
    await until(1)
    times = []
    for n in range(2, 2 + warmup + runs):
        new = text + f"// edit {n}\n"
        sent = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=n),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=new)]))
        await until(n)
        if n >= 2 + warmup:
            times.append((got[n] - sent) * 1000)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return times


def in_process(text: str, runs: int) -> tuple[list[float], list[float]]:
    from hiplint.config import Settings
    from hiplint.engine import Linter
    from hiplint.registry import load_registry, select_rules

    settings = Settings()
    linter = Linter(settings, select_rules(settings, load_registry()))
    linter.reuse_trees = True  # as the server's (an edited document is parsed from its previous tree)
    data = text.encode()
    linter.lint_bytes("doc.cu", data, "cuda")
    wall, cpu = [], []
    for n in range(runs):
        d = data + f"// edit {n}\n".encode()
        t, c = time.perf_counter(), time.process_time()
        linter.lint_bytes("doc.cu", d, "cuda")
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return wall, cpu


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--debounce-ms", type=int, default=0)
    args = ap.parse_args(argv)
    from yardstick import line as yardstick_line
    print(yardstick_line())
    print(f"{'document':22} {'lines':>6} {'median ms':>10} {'p90 ms':>8} {'lint wall ms':>13} {'lint CPU ms':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in documents().items():
            times = asyncio.run(measure(name, text, args.runs, args.warmup, args.debounce_ms, Path(tmp)))
            lint, cpu = in_process(text, args.runs)
            p90 = sorted(times)[max(0, int(len(times) * 0.9) - 1)]
            print(f"{name:22} {text.count(chr(10)):>6} {statistics.median(times):>10.1f} {p90:>8.1f} "
                  f"{statistics.median(lint):>13.1f} {statistics.median(cpu):>12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
