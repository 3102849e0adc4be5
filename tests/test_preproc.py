"""Which #if branches are HIP-only or NVIDIA-only."""
from hiplint.cparse import new_parser
from hiplint.preproc import PlatformMap, is_hip_macro


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


def test_hip_device_pass_is_not_a_platform_switch():
    # AMD's host pass compiles the #else: it must stay visible to the rules.
    assert kinds("#ifdef __HIP_DEVICE_COMPILE__\nint x_a;\n#else\nint x_b;\n#endif\n") == {"A": "hip", "B": None}


def test_project_macros_named_hip_or_rocm():
    # Projects' own switches (Faiss's USE_AMD_ROCM, AMReX's AMREX_USE_HIP): HIP or ROCM is one of the words.
    for name in ("USE_AMD_ROCM", "AMREX_USE_HIP", "KOKKOS_ENABLE_HIP", "ROCM_VERSION_MAJOR", "HIP_ENABLE_WARP_SYNC_BUILTINS"):
        assert is_hip_macro(name), name
        assert kinds(f"#ifdef {name}\nint x_a;\n#else\nint x_b;\n#endif\n") == {"A": "hip", "B": "nvidia"}, name
    # A word that says the opposite or names NVIDIA, HIP inside a longer word, or nvcc's own macros.
    for name in ("NO_ROCM", "MYLIB_DISABLE_HIP", "HIP_CUDA_COMPAT", "__HIP_PLATFORM_NVIDIA__", "SHIPPING_BUILD",
                 "HIPCUB_STUFF", "__CUDA_ARCH__"):
        assert not is_hip_macro(name), name
    assert kinds("#ifdef MYLIB_NO_ROCM\nint x_a;\n#else\nint x_b;\n#endif\n") == {"A": None, "B": None}
