from __future__ import annotations

from hiplint.lazy import libcst as cst

from hiplint import FileRule, Impact, Severity
from hiplint import pyparse
from hiplint.rules.build import _nvcc

from ._vendor import file_mentions, handles_rocm
from .visible_devices_env import env_access

EXTENSION_CLASSES = ("CUDAExtension",)
LOADERS = ("load", "load_inline")
CPP_EXTENSION = "torch.utils.cpp_extension"
CUDA_ARCH_ENV = "TORCH_CUDA_ARCH_LIST"
ROCM_ARCH_ENV = "PYTORCH_ROCM_ARCH"


def _is_extension(py, func) -> bool:
    names = py.names(func)
    return any(n == f"{CPP_EXTENSION}.CUDAExtension" or n.rsplit(".", 1)[-1] in EXTENSION_CLASSES for n in names)


def _is_loader(py, func) -> bool:
    names = py.names(func)
    # Plain `load(...)` is only the torch loader when imported from torch.utils.cpp_extension.
    return any(n in (f"{CPP_EXTENSION}.{l}" for l in LOADERS) or n.endswith(tuple(f"cpp_extension.{l}" for l in LOADERS))
               for n in names)


class ExtensionNvccFlags(FileRule):
    """PyTorch CUDA extension built with nvcc-only options.

    ## What it does
    Finds nvcc-only options (the BLD005/BLD006 table: `--use_fast_math`, `--expt-relaxed-constexpr`,
    `-Xptxas`, `-lineinfo`, `-arch=sm_XX`, `-gencode`, ...) in the `"nvcc"` list of
    `CUDAExtension(..., extra_compile_args={"nvcc": [...]})` and in `extra_cuda_cflags` of
    `torch.utils.cpp_extension.load()` / `load_inline()`. The list may be a literal or a
    module/function-level variable (`NVCC_FLAGS = [...]`, `NVCC_FLAGS += [...]`,
    `NVCC_FLAGS.append(...)`); f-strings are checked on their literal prefix (`f"-arch={arch}"`).
    Options added under `if not IS_HIP_EXTENSION:` (or any condition naming HIP/ROCm or
    `torch.version.cuda`, or cpp_extension's `CUDA_HOME`, both None on ROCm builds) are not reported, nor extensions defined under such a condition. Also
    reported (as a warning): setting `TORCH_CUDA_ARCH_LIST` in a file that never names
    `PYTORCH_ROCM_ARCH`. Options that clang only warns about in a compile step, which is all the
    `"nvcc"` list reaches (`-lineinfo`, `-diag-suppress=N`), are warnings. One finding per file for
    architecture options and one for other options (per severity); the others are listed with it as
    related locations.

    ## Why it breaks on AMD
    On a ROCm build of PyTorch, `CUDAExtension` and `load()` hipify the sources and compile the
    `.cu` files with hipcc, passing the `"nvcc"` list (and `extra_cuda_cflags`) to hipcc unchanged,
    after torch's own HIP flags (`-D__HIP_PLATFORM_AMD__=1 -DUSE_ROCM=1 ...`). hipcc hands unknown
    options to clang, which rejects most nvcc options (`unknown argument: '--expt-relaxed-constexpr'`)
    and misreads some (`-use_fast_math` becomes `-u se_fast_math`). The extension then fails to
    build on every ROCm version. AMD targets come from `--offload-arch` options in the list or from
    `PYTORCH_ROCM_ARCH` (else the architectures torch itself was built for); `-arch`/`-gencode` and
    `TORCH_CUDA_ARCH_LIST` are NVIDIA-only.

    ## Example
    ```python
    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension

    setup(
        name="fused_ops",
        ext_modules=[CUDAExtension("fused_ops", ["fused_ops.cpp", "fused_kernel.cu"],
                                   extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math"]})],
        cmdclass={"build_ext": BuildExtension},
    )
    ```

    ## Use instead
    ```python
    from setuptools import setup
    from torch.utils.cpp_extension import IS_HIP_EXTENSION, BuildExtension, CUDAExtension

    nvcc_flags = ["-O3"]
    if not IS_HIP_EXTENSION:
        nvcc_flags += ["--use_fast_math"]
    else:
        nvcc_flags += ["-ffast-math"]
    setup(
        name="fused_ops",
        ext_modules=[CUDAExtension("fused_ops", ["fused_ops.cpp", "fused_kernel.cu"],
                                   extra_compile_args={"cxx": ["-O3"], "nvcc": nvcc_flags})],
        cmdclass={"build_ext": BuildExtension},
    )
    ```

    ## References
    - torch.utils.cpp_extension (IS_HIP_EXTENSION, COMMON_HIPCC_FLAGS, ROCm arch flags from PYTORCH_ROCM_ARCH): https://github.com/pytorch/pytorch/blob/main/torch/utils/cpp_extension.py
    - PyTorch C++ extension docs (`extra_compile_args`, `extra_cuda_cflags`): https://pytorch.org/docs/stable/cpp_extension.html
    - hipcc argument handling: https://github.com/ROCm/llvm-project/blob/amd-staging/amd/hipcc/src/hipBin_amd.h
    """

    code = "PY003"
    name = "extension-nvcc-flags"
    summary = "nvcc-only option in a PyTorch CUDA extension; on ROCm torch passes it to hipcc, which rejects or misreads it"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    languages = frozenset({"python"})
    triggers = ("nvcc", "extra_cuda_cflags", "TORCH_CUDA_ARCH_LIST")  # the "nvcc" key, the loaders' keyword, the variable
    checklist = "Branch the extension's nvcc flags on IS_HIP_EXTENSION and give hipcc its own (-ffast-math, --offload-arch via PYTORCH_ROCM_ARCH)."

    def check_file(self, ctx):
        py = pyparse.get(ctx)
        if py is None:
            return
        reported = set()
        self._check_arch_env(ctx, py)
        for call in py.nodes(cst.Call):
            if handles_rocm(py, call):
                continue  # the extension is only built on one vendor's side (`if not IS_HIP_EXTENSION:`)
            for value in self._flag_lists(py, call):
                elements = [e for e in self._elements(py, value, set()) if not handles_rocm(py, e)]
                self._check_elements(ctx, py, elements, reported)

    def _flag_lists(self, py, call):
        if _is_extension(py, call.func):
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "extra_compile_args":
                    yield from self._nvcc_entry(py, arg.value, set())
        elif _is_loader(py, call.func):
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "extra_cuda_cflags":
                    yield arg.value

    def _nvcc_entry(self, py, node, visiting):
        """The value of the "nvcc" key of an extra_compile_args dict (literal, dict(nvcc=...) or a variable)."""
        if isinstance(node, cst.Dict):
            for el in node.elements:
                if isinstance(el, cst.DictElement) and pyparse.string_value(el.key) == "nvcc":
                    yield el.value
        elif isinstance(node, cst.Call) and pyparse.dotted(node.func) == "dict":
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "nvcc":
                    yield arg.value
        elif isinstance(node, cst.Name) and node.value not in visiting:
            visiting = visiting | {node.value}
            for value in pyparse.assigned_values(py, node):
                yield from self._nvcc_entry(py, value, visiting)
            # extra_args["nvcc"] = [...]
            for assign in py.nodes(cst.Assign):
                for t in assign.targets:
                    sub = t.target
                    if isinstance(sub, cst.Subscript) and pyparse.dotted(sub.value) == node.value and \
                            len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index) and \
                            pyparse.string_value(sub.slice[0].slice.value) == "nvcc":
                        yield assign.value

    def _elements(self, py, node, visiting):
        """String elements of a flag list expression, following variables and `+`."""
        if isinstance(node, (cst.List, cst.Tuple)):
            for el in node.elements:
                if isinstance(el, cst.StarredElement):
                    yield from self._elements(py, el.value, visiting)
                else:
                    yield from self._elements(py, el.value, visiting)
        elif isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            yield node
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            yield from self._elements(py, node.left, visiting)
            yield from self._elements(py, node.right, visiting)
        elif isinstance(node, cst.Name) and node.value not in visiting:
            visiting = visiting | {node.value}
            for value in pyparse.assigned_values(py, node, include_augmented=True):
                yield from self._elements(py, value, visiting)

    @staticmethod
    def _check_arch_env(ctx, py):
        """TORCH_CUDA_ARCH_LIST set for the extension build, with no PYTORCH_ROCM_ARCH anywhere in the file."""
        if file_mentions(py, (ROCM_ARCH_ENV,)):
            return
        for node in py.nodes(cst.SimpleString):
            if pyparse.string_value(node) != CUDA_ARCH_ENV or env_access(py, node) != "write":
                continue
            if handles_rocm(py, node):
                continue
            start, end = py.span(node)
            ctx.report_range(start, end,
                             f"`{CUDA_ARCH_ENV}` is ignored by ROCm builds of PyTorch: extensions are built for "
                             f"`{ROCM_ARCH_ENV}` (e.g. \"gfx90a;gfx942\"), else for the architectures torch was "
                             "built for; set it too", severity=Severity.WARNING)

    @staticmethod
    def _check_elements(ctx, py, elements, reported):
        """Scan the words of all string elements in order (`"-gencode", "arch=..."` spans two elements)."""
        tokens = []
        for index, element in enumerate(elements):
            text = pyparse.string_value(element)
            if text is None:
                text = pyparse.fstring_prefix(element)
            for word in (text or "").split():
                tokens.append((word, index, index))
        for use in _nvcc.scan(tokens, nvcc_context=True):
            start = py.span(elements[use.start])[0]
            end = py.span(elements[use.end])[1]
            if (start, end) in reported:
                continue
            reported.add((start, end))
            shown = use.token if not use.value or "=" in use.token else f"{use.token} {use.value}"
            breaks = use.option.breaks_in(compile_only=True)
            finding = ctx.report_range(start, end, f"`{shown}` in the extension's nvcc flags reaches hipcc on ROCm builds of "
                                                   f"PyTorch: {use.option.effect_in(compile_only=True)}; for HIP: "
                                                   f"{use.option.instead}",
                                       severity=None if breaks else Severity.WARNING,
                                       group=("arch:" if use.option.kind == "arch" else "option:")
                                       + ("breaks" if breaks else "misread"))
            if finding is not None and not breaks:
                finding.impact = Impact.PORTABILITY  # a clang warning: the build goes on
