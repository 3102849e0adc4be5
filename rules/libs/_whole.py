"""A library that needs a manual port, reported once per file: at its include, or at its first name,
with the library's names in the file as related locations; and once per directory in what a scan
reports (hiplint.engine.merge_directory_groups), the directory's other files related."""
from __future__ import annotations

from hiplint import CudaRule, Impact, Severity

from ._scan import Library, first_use, is_last_unit, load_table, relate_uses, span


class WholeLibraryRule(CudaRule):
    """Base class: subclasses set `library` (a key of [libraries] in libraries.toml) and the texts."""

    library: str = ""
    # A library's headers often fill a directory one include each (a CUTLASS kernel's iterators, epilogues,
    # ...): one re-implementation task, so one finding per directory, the other files related.
    group_by_directory = True
    severity = Severity.WARNING
    impact = Impact.COMPILE

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if cls.library:
            cls.triggers = cls.lib(cls).triggers()

    def lib(self) -> Library:
        return Library.from_table(self.library, load_table("libraries.toml")["libraries"][self.library])

    def amd_side(self) -> str:
        return load_table("libraries.toml")["libraries"][self.library].get("amd", "")

    def message(self, where: str, text: str) -> str:
        lib = self.lib()
        what = f"`#include <{text}>`" if where == "include" else f"first use of {lib.title} (`{text}`)"
        if where == "include" and text in self.amd_unsupported():
            port = self.amd_side().split(" (")[0]
            return (f"{what}: {lib.title} has no drop-in HIP rename, and {port}, the AMD port, lists <{text}> as "
                    f"unsupported: rewrite what it provides with HIP primitives")
        return f"{what}: {lib.title} has no drop-in HIP rename; port to {self.amd_side()}"

    def amd_unsupported(self) -> frozenset[str]:
        return frozenset(load_table("libraries.toml")["libraries"][self.library].get("amd_unsupported", ()))

    def fix_for(self, ctx, where, item):
        return None

    def check_unit(self, ctx) -> None:
        if not is_last_unit(ctx):
            return  # all units are scanned together once, after the last
        found = first_use(ctx, self.lib(), self.amd_unsupported())
        if found is None:
            return
        where, item = found
        text = item.path if where == "include" else item.text
        if where != "include" and _project_namespace(ctx, text.split("::")[0].strip(), self.lib()):
            return  # TileLang's own `tl::cute` in a header of its own: not the library
        finding = ctx.report_range(*span(item), self.message(where, text), fix=self.fix_for(ctx, where, item))
        relate_uses(ctx, finding, self.lib(), f"{self.lib().title} used here")


def _project_namespace(ctx, namespace: str, lib: Library) -> bool:
    """Does a project header the file includes define `namespace <namespace>` itself, with no header of
    the library included by any of them (a project's own `cute` namespace, not CuTe's)?"""
    import re

    from hiplint.headers import project_headers

    if not namespace:
        return False
    defines = re.compile(rb"\bnamespace\s+" + re.escape(namespace.encode()) + rb"\s*\{")
    prefixes = [re.split(r"[*?\[]", h)[0] for h in lib.headers]
    if not prefixes or namespace not in lib.namespaces:
        return False
    library_include = re.compile(rb"#\s*include\s*[<\"](?:" + b"|".join(re.escape(p.encode()) for p in prefixes) + rb")")
    headers = project_headers(ctx)
    if any(library_include.search(data) for _, data in headers) or library_include.search(ctx.source.data):
        return False
    return any(defines.search(data) for _, data in headers)
