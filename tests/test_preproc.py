"""Which #if branches are HIP-only or NVIDIA-only."""
from hiplint.cparse import new_parser
from hiplint.preproc import HIP_MACROS, PlatformMap, directive_groups, excluded_when, is_hip_macro


def kinds(src: str) -> dict[str, str | None]:
    data = src.encode()
    pm = PlatformMap(new_parser().parse(data).root_node, data)
    tags = {"A": "int x_a;", "B": "int x_b;", "C": "int x_c;"}
    return {t: pm.kind_at(data.index(m.encode())) for t, m in tags.items() if m in src}


def test_ifdef_hip_else():
    assert kinds("#ifdef __HIP_PLATFORM_AMD__\nint x_a;\n#else\nint x_b;\n#endif\nint x_c;\n") == {"A": "hip", "B": "nvidia", "C": None}


def test_ifndef_and_negation():
    assert kinds("#ifndef USE_ROCM\nint x_a;\n#endif\n") == {"A": "nvidia"}
    assert kinds("#if !defined(__HIPCC__)\nint x_a;\n#else\nint x_b;\n#endif\n") == {"A": "nvidia", "B": "hip"}


def test_compound_conditions():
    assert kinds("#if defined(__HIPCC__) && defined(FOO)\nint x_a;\n#endif\n") == {"A": "hip"}
    assert kinds("#if defined(__HIPCC__) || defined(FOO)\nint x_a;\n#endif\n") == {"A": None}
    assert kinds("#if defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)\nint x_a;\n#else\nint x_b;\n#endif\n") == {"A": "hip", "B": "nvidia"}


def test_cuda_arch_is_not_a_platform_switch():
    # The device pass of nvcc vs the host pass: nothing here is provably NVIDIA-only beside HIP code.
    assert kinds("#ifdef __CUDA_ARCH__\nint x_a;\n#else\nint x_b;\n#endif\n") == {"A": None, "B": None}
    assert kinds("#if __CUDA_ARCH__ >= 800\nint x_a;\n#endif\n") == {"A": None}


def test_elif_chain():
    src = "#if defined(__NVCC__)\nint x_a;\n#elif defined(__HIPCC__)\nint x_b;\n#else\nint x_c;\n#endif\n"
    assert kinds(src) == {"A": "nvidia", "B": "hip", "C": None}


def test_branches_no_compiler_takes():
    # `#if 0` and IDE code-model blocks are for no build; the plain-C++ #else of an nvcc/hipcc chain is
    # a host compiler's (test_elif_chain), so "neither nvcc nor hipcc" alone is not enough.
    assert kinds("#if 0\nint x_a;\n#else\nint x_b;\n#endif\n") == {"A": "never", "B": None}
    assert kinds("#ifdef __CLION_IDE__\nint x_a;\n#endif\n#if defined(__INTELLISENSE__)\nint x_b;\n#endif\n") == \
        {"A": "never", "B": "never"}
    assert kinds("#ifndef __CLION_IDE__\nint x_a;\n#endif\n#if 1\nint x_b;\n#endif\n") == {"A": None, "B": None}
    # Switched off by a leading `0 &&` (a common way to disable a fast path), or by `0 || 0`.
    assert kinds("#if 0 && defined(__CUDA_ARCH__)\nint x_a;\n#endif\n#if (0) || (defined(FOO) && 0)\nint x_b;\n#endif\n"
                 "#if 0 || defined(FOO)\nint x_c;\n#endif\n") == {"A": "never", "B": "never", "C": None}


def test_hip_device_pass_is_not_a_platform_switch():
    # AMD's host pass compiles the #else: it must stay visible to the rules.
    assert kinds("#ifdef __HIP_DEVICE_COMPILE__\nint x_a;\n#else\nint x_b;\n#endif\n") == {"A": "hip", "B": None}


def test_project_macros_named_hip_or_rocm():
    # Projects' own switches (Faiss's USE_AMD_ROCM, AMReX's AMREX_USE_HIP): HIP or ROCM is one of the words.
    for name in ("USE_AMD_ROCM", "AMREX_USE_HIP", "KOKKOS_ENABLE_HIP", "ROCM_VERSION_MAJOR", "HIP_ENABLE_WARP_SYNC_BUILTINS",
                 "GMX_USE_ROCTX", "XGBOOST_USE_RCCL", "USE_MIOPEN"):  # AMD libraries name AMD builds too
        assert is_hip_macro(name), name
        assert kinds(f"#ifdef {name}\nint x_a;\n#else\nint x_b;\n#endif\n") == {"A": "hip", "B": "nvidia"}, name
    # A word that says the opposite or names NVIDIA, HIP inside a longer word, or nvcc's own macros.
    for name in ("NO_ROCM", "MYLIB_DISABLE_HIP", "HIP_CUDA_COMPAT", "__HIP_PLATFORM_NVIDIA__", "SHIPPING_BUILD",
                 "CHIPSET_ID", "__CUDA_ARCH__"):
        assert not is_hip_macro(name), name
    assert kinds("#ifdef MYLIB_NO_ROCM\nint x_a;\n#else\nint x_b;\n#endif\n") == {"A": None, "B": None}


def test_target_macros_are_amd_code_but_not_all_of_it():
    # The #else of a gfx90a test is compiled for every other AMD target and for the host pass.
    assert kinds("#if defined(__gfx90a__)\nint x_a;\n#else\nint x_b;\n#endif\n") == {"A": "hip", "B": None}
    assert kinds("#ifdef __AMDGCN__\nint x_a;\n#else\nint x_b;\n#endif\n") == {"A": "hip", "B": None}
    # Still a HIP alternative: the CUDA-arch branch after it is NVIDIA-side.
    src = "#if defined(__GFX9__)\nint x_a;\n#elif __CUDA_ARCH__ >= 800\nint x_b;\n#else\nint x_c;\n#endif\n"
    assert kinds(src) == {"A": "hip", "B": "nvidia", "C": None}


def test_directives_the_tree_loses_are_read_from_the_text():
    # An #ifdef inside an argument list is valid C that tree-sitter cannot place in its tree.
    src = "void g() {\n  x = f(b,\n#ifdef __HIP_PLATFORM_AMD__\n    int x_a;\n#else\n    int x_b;\n#endif\n  );\n}\n"
    data = src.encode()
    root = new_parser().parse(data).root_node
    assert PlatformMap(root, data, errors=[]).kind_at(data.index(b"int x_b")) is None  # the tree alone misses it
    assert kinds(src) == {"A": "hip", "B": "nvidia"}


def test_directive_groups_follow_the_text():
    data = b"#if A // note\nx\n#  elif B\ny\n#else\n#ifdef C \\\n  /* more */\nz\n#endif\n#endif\n"
    inner, outer = directive_groups(data)
    assert [(k, c) for k, c, *_ in outer] == [("if", b"A"), ("elif", b"B"), ("else", b"")]
    assert [(k, c) for k, c, *_ in inner] == [("ifdef", b"C")]
    assert data[outer[0][3]:outer[0][4]] == b" // note\nx\n"
    assert data[outer[2][3]:outer[2][4]].startswith(b"\n#ifdef C")
    # A Windows line ending inside a continuation keeps the directive whole.
    [(_, cond, *_)] = directive_groups(b"#if defined(A) && \\\r\n    defined(B)\r\nx\r\n#endif\r\n")[0]
    assert b" ".join(cond.split()) == b"defined(A) && defined(B)"
    # Directive-looking lines in block comments and raw strings are text; `/*` in a string or after
    # `//` opens nothing.
    data = (b'int a; // see /* here\n#if defined(USE_ROCM)\nint x;\n/*\n#else\n*/\nconst char* s = R"doc(\n'
            b'#endif\n)doc";\nconst char* t = "/*";\n#else\nint y;\n#endif\n')
    [group] = directive_groups(data)
    assert [(k, c) for k, c, *_ in group] == [("if", b"defined(USE_ROCM)"), ("else", b"")]
    assert data[group[1][3]:group[1][4]] == b"\nint y;\n"


def test_excluded_when_a_target_builds():
    gfx942 = {"__gfx942__": True, "__gfx90a__": False}.get
    src = (b"#if defined(__gfx90a__) || defined(__gfx942__)\nint x_a;\n#else\nint x_b;\n#endif\n"
           b"#ifndef __gfx942__\nint x_c;\n#elif USE_TEX\nint x_d;\n#endif\n")
    got = [excluded_when(src.index(m), src, gfx942) for m in (b"int x_a", b"int x_b", b"int x_c", b"int x_d")]
    assert got == [False, True, True, False]


def test_amd_truth_leaves_the_named_macros_unknown():
    from hiplint.preproc import amd_truth

    def truth(cond: str, device_pass=True):
        data = f"#if {cond}\n#endif\n".encode()
        node = new_parser().parse(data).root_node.named_children[0].child_by_field_name("condition")
        return amd_truth(node, data, unknown=lambda name: name == "__CUDA_ARCH__", device_pass=device_pass)

    assert truth("defined(__GNUC__) && !defined(__clang__) && !defined(__CUDA_ARCH__)") is False
    assert truth("defined(__NVCC__) && __CUDA_ARCH__ >= 800") is False
    assert truth("defined(__HIP_DEVICE_COMPILE__) || __CUDA_ARCH__ >= 800") is True
    assert truth("__CUDA_ARCH__ >= 800") is None
    assert truth("defined(__GNUC__) && __CUDA_ARCH__ >= 800") is None
    # Outside the device pass clang is not a given (host files may be built by g++).
    assert truth("defined(__GNUC__) && !defined(__clang__) && !defined(__CUDA_ARCH__)", device_pass=False) is None


def test_cuda_switch_before_a_hip_branch_is_nvidia_only():
    src = """
#ifdef AMREX_USE_CUDA
int cuda_side;
#elif defined(AMREX_USE_HIP)
int hip_side;
#endif
#if defined(GGML_USE_CUDA) && FAST
int cuda_fast;
#elif defined(GGML_USE_HIP)
int hip_too;
#endif
#if defined(USE_FAST_MATH)
int feature;
#elif defined(USE_ROCM)
int rocm;
#endif
#if !defined(WITH_CUDA)
int not_cuda;
#elif defined(USE_ROCM)
int rocm2;
#endif
#ifdef NO_CUDA
int no_cuda;
#elif defined(USE_ROCM)
int rocm3;
#endif
#ifdef USE_CUDA
int lone_cuda;
#endif
"""
    data = src.encode()
    pm = PlatformMap(new_parser().parse(data).root_node, data)
    got = {name: pm.kind_at(data.index(f"int {name};".encode())) for name in
           ("cuda_side", "hip_side", "cuda_fast", "feature", "not_cuda", "no_cuda", "lone_cuda")}
    assert got["cuda_side"] == "nvidia" and got["hip_side"] == "hip"
    assert got["cuda_fast"] == "nvidia"
    assert got["feature"] is None  # a feature switch: an AMD build may set it
    assert got["not_cuda"] is None
    assert got["no_cuda"] is None
    assert got["lone_cuda"] is None  # no HIP branch beside it: unknown


def test_nvidia_compiler_macros_are_off_for_amd():
    from hiplint.preproc import names_nvidia_compiler

    assert names_nvidia_compiler("KOKKOS_COMPILER_NVCC") and names_nvidia_compiler("KOKKOS_COMPILER_NVHPC")
    assert names_nvidia_compiler("__PGI") and names_nvidia_compiler("C_COMPILER_FAMILY_IS_PGI")
    assert not names_nvidia_compiler("HIP_NVCC_COMPAT") and not names_nvidia_compiler("USE_CUDA")
    # HIP's own spelling for the NVIDIA platform, in a project's macro: HIP word or not.
    assert names_nvidia_compiler("GINKGO_HIP_PLATFORM_NVCC") and names_nvidia_compiler("MY_HIP_PLATFORM_NVIDIA")
    assert not names_nvidia_compiler("GINKGO_HIP_PLATFORM_HCC") and not names_nvidia_compiler("NVIDIA_PLATFORM_HIP")
    got = {name: PlatformMap(new_parser().parse(src.encode()).root_node, src.encode()).kind_at(src.index("int x"))
           for name, src in {
               "nvcc": "#ifdef MYLIB_COMPILER_NVCC\nint x;\n#elif defined(USE_ROCM)\nint y;\n#endif\n",
               "cuda_version": "#if CUDA_VERSION >= 11000\nint x;\n#elif defined(USE_ROCM)\nint y;\n#endif\n",
           }.items()}
    assert got == {"nvcc": "nvidia", "cuda_version": "nvidia"}


def test_toolkit_versions_every_supported_nvcc_passes():
    # Every CUDA from 11.0 on takes `>= 9000`; AMD takes the other branch, which stays AMD-compiled code
    # written for old toolkits (not "hip": the rules about CUDA code still read it).
    assert kinds("#if CUDA_VERSION >= 9000\nint x_a;\n#else\nint x_b;\n#endif\n") == {"A": "nvidia", "B": None}
    assert kinds("#if CUDA_VERSION < 9000\nint x_a;\n#else\nint x_b;\n#endif\n") == {"A": None, "B": "nvidia"}
    assert kinds("#if __CUDACC_VER_MAJOR__ >= 11\nint x_a;\n#else\nint x_b;\n#endif\n") == {"A": "nvidia", "B": None}
    # A lone #if is a feature AMD loses: its code is what a port brings over. A newer threshold is
    # not settled for every toolkit in use.
    assert kinds("#if CUDART_VERSION >= 10000\nint x_a;\n#endif\n") == {"A": None}
    assert kinds("#if CUDART_VERSION >= 12000\nint x_a;\n#else\nint x_b;\n#endif\n") == {"A": None, "B": None}


def test_project_switches_derived_from_where_they_are_defined():
    from hiplint.preproc import AMD_ONLY, NVIDIA_ONLY, ZERO_ON_AMD, derive_macros

    defines = [("DEV_CUDA", "nvidia", False), ("DEV_AMD", "hip", False),
               ("HAS_TMA", "nvidia", False), ("HAS_TMA", None, True),   # 1 for NVIDIA, 0 otherwise
               ("FAST", "nvidia", False), ("FAST", None, False),        # also defined where AMD compiles it
               ("BOTH", "nvidia", False), ("BOTH", "hip", False), ("PLAIN", None, False)]
    assert derive_macros(defines) == {"DEV_CUDA": NVIDIA_ONLY, "DEV_AMD": AMD_ONLY, "HAS_TMA": ZERO_ON_AMD}


def test_branches_on_derived_switches():
    from hiplint.preproc import AMD_ONLY, NVIDIA_ONLY, ZERO_ON_AMD

    src = ("#ifdef DEV_CUDA\nint x_a;\n#endif\n#if HAS_TMA\nint x_b;\n#endif\n"
           "#if defined(DEV_AMD)\nint x_c;\n#endif\n")
    data = src.encode()
    root = new_parser().parse(data).root_node
    plain = PlatformMap(root, data)
    assert [plain.kind_at(data.index(m)) for m in (b"x_a", b"x_b", b"x_c")] == [None, None, None]
    assert {"DEV_CUDA", "HAS_TMA", "DEV_AMD"} <= plain.open_names  # what a header may settle
    pm = PlatformMap(root, data, derived={"DEV_CUDA": NVIDIA_ONLY, "HAS_TMA": ZERO_ON_AMD, "DEV_AMD": AMD_ONLY})
    assert [pm.kind_at(data.index(m)) for m in (b"x_a", b"x_b", b"x_c")] == ["nvidia", "nvidia", "hip"]
    # `defined(HAS_TMA)` is not settled by "0 on AMD": the macro is defined there, as 0.
    src2 = b"#ifdef HAS_TMA\nint x_a;\n#endif\n"
    pm2 = PlatformMap(new_parser().parse(src2).root_node, src2, derived={"HAS_TMA": ZERO_ON_AMD})
    assert pm2.kind_at(src2.index(b"x_a")) is None


def test_include_guards_are_not_open_switches():
    src = b"#ifndef MY_KERNEL_H\n#define MY_KERNEL_H\n#ifdef LIB_FAST\nint x_a;\n#endif\n#endif\n"
    pm = PlatformMap(new_parser().parse(src).root_node, src)
    assert pm.open_names == {"LIB_FAST"}  # the guard would send hiplint reading headers for nothing


def test_word_operators_respelled_in_directives_only():
    """`and`/`or`/`not` in #if and #elif lines (continuations included, LF or CRLF) are given to the
    parser as && || !, with the same length; code and other directives keep their words."""
    from hiplint.cparse import for_parsing

    for nl in (b"\n", b"\r\n"):
        src = (b"#if defined(A) \\" + nl + b"  and not B" + nl + b"int x = a and b;" + nl +
               b"#elif C or D" + nl + b"#endif" + nl + b"#ifdef and_x" + nl + b"#endif" + nl)
        out = for_parsing(src)
        assert len(out) == len(src)
        assert out == (b"#if defined(A) \\" + nl + b"  &&  !   B" + nl + b"int x = a and b;" + nl +
                       b"#elif C || D" + nl + b"#endif" + nl + b"#ifdef and_x" + nl + b"#endif" + nl)
    data = b"#if not defined(__HIP_PLATFORM_AMD__) and defined(FOO)\nint x_a;\n#endif\n"
    pm = PlatformMap(new_parser().parse(for_parsing(data)).root_node, data)
    assert pm.kind_at(data.index(b"int x_a")) == "nvidia"  # the HIP test is seen: NVIDIA-only code


def test_unreported_spans_from_the_directive_lines():
    from hiplint.preproc import unreported_spans

    src = (b"#ifndef PROJ_HIP_SCAN_H\n#define PROJ_HIP_SCAN_H\n"       # a guard: never blanked
           b"#if !defined(USE_ROCM)\nint nv = 1; {\n#else\nint amd = 1;\n#endif\n"
           b"#if 0\nold code\n#endif\n"
           b"#if __CUDA_ARCH__ >= 800\nint lone = 1;\n#endif\n"         # a lone arch test stays (reported)
           b"#endif\n")
    bodies = [src[s:e] for s, e in unreported_spans(src)]
    assert bodies == [b"\nint nv = 1; {\n", b"\nold code\n"]


def test_a_fix_touching_a_blanked_span_is_dropped():
    # The rules saw the AMD view of an unbalanced file; an edit reaching into a span blank there would
    # write the blank text back over NVIDIA code.
    from hiplint.config import Settings
    from hiplint.context import FileContext
    from hiplint.engine import Linter
    from hiplint.model import Edit, Fix
    from hiplint.registry import load_registry, select_rules
    from hiplint.source import Source

    settings = Settings()
    linter = Linter(settings, select_rules(settings, load_registry()))
    data = b"int a;\nint b;\nint c;\n"
    ctx = FileContext("k.cu", Source("k.cu", data), settings, "cuda")
    ctx.blanked = [(7, 14)]
    ctx.rule = next(r for r in linter.cuda_rules if r.code == "WRP006")
    inside = ctx.report_range(0, 3, "spans into the blank", Fix.safe("x", Edit(0, 10, "int z;")))
    beside = ctx.report_range(14, 17, "after it", Fix.safe("y", Edit(14, 17, "int")))
    linter._finish(ctx, [], None)
    assert inside.fix is None and beside.fix is not None


def test_guard_search_is_linear_in_comments():
    # The first version matched "comments, then #define" with a backtracking regex: 12 pairs of
    # `/* a */ /* b */` on one line took 5 s, 40 would never end.
    from hiplint.preproc import unreported_spans

    src = b"#ifndef USE_ROCM\n" + b"/* a */ /* b */ " * 40 + b"\nint nv;\n#else\nint amd;\n#endif\n"
    assert [src[s:e].strip().endswith(b"int nv;") for s, e in unreported_spans(src)] == [True]
    guard = b"#ifndef PROJ_HIP_H /* x */\n/* a */ /* b */ // c\n#define PROJ_HIP_H\nint x;\n#endif\n"
    assert unreported_spans(guard) == []


def test_amd_or_a_newer_nvidia_toolkit_is_written_for_amd():
    # One disjunct is the AMD build, the others fail on AMD (toolkit or architecture tests): AMD code,
    # and the #else is older nvcc's.
    src = "#if defined(USE_ROCM) || CUDART_VERSION >= 12000\nint x_a;\n#else\nint x_b;\n#endif\n"
    assert kinds(src) == {"A": "hip", "B": "nvidia"}
    assert kinds("#if defined(USE_ROCM) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800)\nint x_a;\n#endif\n") == {"A": "hip"}
    # A disjunct AMD may take too (a project macro, any CUDA compiler) keeps it common code.
    assert kinds("#if defined(USE_ROCM) || defined(FOO)\nint x_a;\n#endif\n") == {"A": None}
    assert kinds("#if defined(USE_ROCM) || defined(__CUDACC__)\nint x_a;\n#endif\n") == {"A": None}


def test_definitions_of_the_nvidia_build_only():
    # "!NAME" in the HIP macros (hiplint.amdbuild): the project's NVIDIA build defines NAME, its AMD build not.
    data = b"#ifdef PROJ_GPU_A\nint x_a;\n#else\nint x_b;\n#endif\n"
    pm = PlatformMap(new_parser().parse(data).root_node, data, frozenset({"!PROJ_GPU_A"}))
    assert (pm.kind_at(data.index(b"x_a")), pm.kind_at(data.index(b"x_b"))) == ("nvidia", "hip")


def test_a_chain_read_from_the_tree_and_from_the_text_does_not_stop_the_map():
    # `__has_include(<rocfft/rocfft.h>)` does not parse, so the chain is read again from the text, where
    # a project's NVIDIA switch ("!SIM_USE_CUDA") may settle differently: two readings of one branch.
    from hiplint.preproc import HIP_MACROS, NVIDIA_BUILD_MARK

    data = (b"#if defined(SIM_USE_CUDA)\n#  include <cufft.h>\n#elif defined(SIM_USE_HIP)\n"
            b"#  if __has_include(<rocfft/rocfft.h>)\n#    include <rocfft/rocfft.h>\n#  else\n"
            b"#    include <rocfft.h>\n#  endif\n#endif\nint x;\n")
    root = new_parser().parse(data).root_node
    platform = PlatformMap(root, data, HIP_MACROS | {NVIDIA_BUILD_MARK + "SIM_USE_CUDA"})
    assert platform.kind_at(data.index(b"<cufft.h>")) == "nvidia"
    assert not platform.surely_on_amd(data.index(b"<cufft.h>"))


def test_an_else_neither_amd_pass_takes():
    # kokkos-kernels' bit utilities: the outer branch is for device passes only, the inner #else for every
    # pass but AMD's device pass. Neither AMD pass reaches `x_b`; each AMD pass reaches `x_a` or `x_c`.
    src = ("#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)\n"
           "#if defined(__HIP_DEVICE_COMPILE__)\nint x_a;\n#else\nint x_b;\n#endif\n"
           "#else\nint x_c;\n#endif\n")
    data = src.encode()
    pm = PlatformMap(new_parser().parse(data).root_node, data)
    assert [pm.off_on_amd(data.index(t)) for t in (b"int x_a;", b"int x_b;", b"int x_c;")] == [False, True, False]
    # Without the outer device-only test the #else is AMD's host pass.
    inner = "#if defined(__HIP_DEVICE_COMPILE__)\nint x_a;\n#else\nint x_b;\n#endif\n".encode()
    pm = PlatformMap(new_parser().parse(inner).root_node, inner)
    assert not pm.off_on_amd(inner.index(b"int x_b;"))


def test_macros_of_nvidia_only_libraries_are_off_for_amd():
    # CUTLASS and CuTe have no ROCm build: their macros are undefined in every AMD compile (FBGEMM's
    # Blackwell kernels under `#if defined(CUTLASS_ARCH_MMA_SM100_SUPPORTED)`). A project macro is not.
    def off(src):
        data = src.encode()
        return PlatformMap(new_parser().parse(data).root_node, data).off_on_amd(data.index(b"int x_a;"))

    assert off("#if defined(CUTLASS_ARCH_MMA_SM100_SUPPORTED)\nint x_a;\n#endif\n")
    assert off("#ifdef CUTE_ARCH_TMA_SM90_ENABLED\nint x_a;\n#else\nint x_b;\n#endif\n")
    assert not off("#ifdef CUTLASSY_FEATURE\nint x_a;\n#endif\n")


def test_a_project_defined_macro_reads_like_defined():
    # PETSc: `#if PetscDefined(HAVE_CUDA) ... #elif PetscDefined(HAVE_HIP)`.
    src = "#if PetscDefined(HAVE_CUDA)\nint x_a;\n#elif PetscDefined(HAVE_HIP)\nint x_b;\n#endif\n"
    assert kinds(src) == {"A": "nvidia", "B": "hip"}
    assert kinds("#if MyCheck(HAVE_CUDA)\nint x_a;\n#elif defined(HAVE_HIP)\nint x_b;\n#endif\n")["A"] is None


def test_arithmetic_over_toolkit_macros_is_settled_on_amd():
    # SageAttention: `#if (__CUDACC_VER_MAJOR__ * 10000 + __CUDACC_VER_MINOR__ * 100 >= 120400)` is
    # 0 >= 120400 with hip-clang, which defines neither macro; a switch defined only there is NVIDIA's.
    from hiplint.preproc import HIP, CUDA, condition_truth
    from hiplint.cparse import new_parser as parser

    def truth(cond, world):
        data = f"#if {cond}\nint x;\n#endif\n".encode()
        node = parser().parse(data).root_node.named_children[0].child_by_field_name("condition")
        return condition_truth(node, data, world)

    assert truth("__CUDACC_VER_MAJOR__ * 10000 + __CUDACC_VER_MINOR__ * 100 >= 120400", HIP) is False
    assert truth("(__CUDACC_VER_MAJOR__ * 10000 + __CUDACC_VER_MINOR__ * 100 >= 120400)", CUDA) is None
    assert truth("-(__CUDACC_VER_MAJOR__ - 2) == 2", HIP) is True
    assert truth("__CUDACC_VER_MAJOR__ / 0 > 1", HIP) is None  # not a value: left open
    assert truth("MY_LIB_LEVEL * 2 > 3", HIP) is None  # a project macro: unknown on either side
    src = ("#if (__CUDACC_VER_MAJOR__ * 10000 + __CUDACC_VER_MINOR__ * 100 >= 120400)\n#define FP8_OK\n#endif\n"
           "#ifdef FP8_OK\nint x_a;\n#else\nint x_b;\n#endif\n")
    from hiplint.headers import platform_map
    data = src.encode()
    pm = platform_map(parser().parse(data).root_node, data, HIP_MACROS, [], None)
    assert pm.kind_at(data.index(b"int x_a;")) == "nvidia"


def test_has_include_of_an_nvidia_only_header_is_false_on_amd():
    # MegEngine: `#if __has_include("NvInfer.h") && MGB_ENABLE_TENSOR_RT` / `#if __has_include(<cudnn.h>)`:
    # no ROCm installation has those headers, so the branch is NVIDIA's; rocThrust's `thrust/` is there.
    from hiplint.cparse import for_parsing
    from hiplint.preproc import HIP, CUDA, condition_truth

    def truth(cond, world):
        data = f"#if {cond}\nint x;\n#endif\n".encode()
        node = new_parser().parse(for_parsing(data)).root_node.named_children[0].child_by_field_name("condition")
        return condition_truth(node, data, world)

    assert truth('__has_include("NvInfer.h") && MY_TRT', HIP) is False
    assert truth("__has_include(<cudnn.h>)", HIP) is False
    assert truth("__has_include(<cudnn.h>)", CUDA) is None
    assert truth("__has_include(<thrust/device_vector.h>)", HIP) is None
    assert truth("__has_include(<my/config.h>)", HIP) is None
    data = b"#if __has_include(<cublas_v2.h>)\nint x_a;\n#else\nint x_b;\n#endif\n"
    pm = PlatformMap(new_parser().parse(for_parsing(data)).root_node, data)
    assert pm.off_on_amd(data.index(b"int x_a;")) and not pm.off_on_amd(data.index(b"int x_b;"))
    assert for_parsing(data) != data and len(for_parsing(data)) == len(data)
