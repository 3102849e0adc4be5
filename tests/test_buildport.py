"""`hiplint migrate` ports CMake files and Makefiles to a HIP-only build (hiplint/buildport.py).

The fixture projects under fixtures/migrate_build/ are migrated in both naming modes and compared with
fixtures/migrate_build.expected/<mode>/<path>.expected; the oracle tests configure and build the ported
projects with CMake's HIP language and hipcc in the ROCm 7.2 chroot (and check the unported CMake project
does not configure there)."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES
from hiplint import buildport
from hiplint.config import load_settings
from hiplint.migrate import CHECKLIST_NAME, MigrateOptions, Migrator
from hiplint.registry import load_registry, select_rules
from hiplint.rules.build import _port

PROJECTS = FIXTURES / "migrate_build"
EXPECTED = FIXTURES / "migrate_build.expected"
BUILD_FILES = ["cmake_app/CMakeLists.txt", "cmake_app/kernels/CMakeLists.txt", "make_app/Makefile"]
TARGETS = ("gfx90a", "gfx942", "gfx1100")


def migrate(src, out, targets=None, **opts):
    settings = load_settings([str(src)], None, True)
    if targets:
        settings = settings.with_overrides(targets=tuple(targets))
    return Migrator(settings, select_rules(settings, load_registry()), MigrateOptions(out=str(out), **opts)).run(str(src))


def cmake(text: str, rel: str = "CMakeLists.txt", **facts) -> buildport.Port:
    return buildport.port(rel, text.encode(), "cmake", TARGETS, buildport.TreeFacts(**facts))


def make(text: str, rel: str = "Makefile", **facts) -> buildport.Port:
    return buildport.port(rel, text.encode(), "make", TARGETS, buildport.TreeFacts(**facts))


# The fixture projects ---------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["default", "hip-extension"])
def test_fixture_projects_are_ported_as_expected(tmp_path, mode):
    out = tmp_path / "out"
    result = migrate(PROJECTS, out, hip_extension=mode == "hip-extension")
    for rel in BUILD_FILES:
        expected = (EXPECTED / mode / (rel + ".expected")).read_text()
        assert (out / rel).read_text() == expected, f"{rel} ({mode}) differs from its .expected file"
    ported = {f.src: f for f in result.files if f.build_file}
    assert all(ported[rel].ported and ported[rel].action == "changed" for rel in BUILD_FILES)
    checklist = (out / CHECKLIST_NAME).read_text()
    assert "- [ ] `cmake_app/CMakeLists.txt`: ported (" in checklist
    # What is left by hand is listed under its file, at its line in the ported file.
    top = (out / "cmake_app/CMakeLists.txt").read_text().splitlines()
    line = next(i for i, text in enumerate(top, 1) if "CUDA_SEPARABLE_COMPILATION" in text)
    assert f"  - [ ] line {line}: `CUDA_SEPARABLE_COMPILATION`: HIP has no separable-compilation property" in checklist
    assert "`CUDAToolkit_VERSION`" in checklist
    assert "`-I$(CUDA_PATH)/samples/common/inc`: a directory of the CUDA toolkit" in checklist


def test_ported_build_files_keep_the_names_the_migration_writes(tmp_path):
    out = tmp_path / "out"
    migrate(PROJECTS, out, hip_extension=True)
    text = (out / "cmake_app/CMakeLists.txt").read_text()
    assert "src/solver.hip" in text and (out / "cmake_app/src/solver.hip").exists()
    assert "%.o: %.hip" in (out / "make_app/Makefile").read_text()
    migrate(PROJECTS, tmp_path / "plain")
    text = (tmp_path / "plain/cmake_app/CMakeLists.txt").read_text()
    assert "set_source_files_properties(src/solver.cu PROPERTIES LANGUAGE HIP)" in text
    assert (tmp_path / "plain/cmake_app/src/solver.cu").exists()


def test_a_ported_tree_is_not_ported_again(tmp_path):
    migrate(PROJECTS, tmp_path / "one")
    result = migrate(tmp_path / "one", tmp_path / "two")
    for rel in BUILD_FILES:
        assert (tmp_path / "one" / rel).read_bytes() == (tmp_path / "two" / rel).read_bytes()
    assert not any(f.ported for f in result.files)


def test_the_targets_come_from_the_settings(tmp_path):
    migrate(PROJECTS, tmp_path / "out", targets=["gfx1030"])
    assert 'set(CMAKE_HIP_ARCHITECTURES "gfx1030")' in (tmp_path / "out/cmake_app/CMakeLists.txt").read_text()
    assert "GENCODE   := --offload-arch=gfx1030\n" in (tmp_path / "out/make_app/Makefile").read_text()


# CMake ------------------------------------------------------------------------------------------

def test_cmake_language_architectures_and_standard():
    out = cmake("cmake_minimum_required(VERSION 3.18...3.27)\nproject(p LANGUAGES CXX CUDA)\n"
                "set(CMAKE_CUDA_ARCHITECTURES 70-real 80)\nadd_executable(p a.cu b.cpp)\n"
                "set_target_properties(p PROPERTIES CUDA_STANDARD 17 CUDA_ARCHITECTURES native)\n").data.decode()
    assert out == ("cmake_minimum_required(VERSION 3.21...3.27)\nproject(p LANGUAGES CXX HIP)\n"
                   'set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx942;gfx1100")\nadd_executable(p a.cu b.cpp)\n'
                   "set_source_files_properties(a.cu PROPERTIES LANGUAGE HIP)\n"
                   'set_target_properties(p PROPERTIES HIP_STANDARD 17 HIP_ARCHITECTURES "gfx90a;gfx942;gfx1100")\n')


def test_cmake_toolkit_include_directories_are_dropped():
    text = cmake("project(p CUDA)\ntarget_include_directories(t PRIVATE ${CUDAToolkit_INCLUDE_DIRS} inc)\n"
                 "include_directories(\"${CUDA_INCLUDE_DIRS}\")\n").data.decode()
    assert "target_include_directories(t PRIVATE inc)\ninclude_directories()\n" in text


def test_cmake_crlf_lines_stay_crlf():
    out = cmake("project(p CUDA)\r\nfind_package(CUDAToolkit REQUIRED)\r\nadd_executable(p a.cu)\r\n",
                packages=(("", frozenset({"hipblas"})),)).data
    assert out.count(b"\n") == out.count(b"\r\n") == 6  # 3 lines, and the architectures, hipblas, LANGUAGE HIP


def test_cmake_globs_of_cu_files():
    text = "project(p CUDA)\nset(CMAKE_CUDA_ARCHITECTURES 80)\nfile(GLOB SRCS CONFIGURE_DEPENDS src/*.cu)\nadd_library(k ${SRCS})\n"
    once = cmake(text).data.decode()
    assert "file(GLOB SRCS CONFIGURE_DEPENDS src/*.cu)\nset_source_files_properties(${SRCS} PROPERTIES LANGUAGE HIP)\n" in once
    assert "file(GLOB SRCS CONFIGURE_DEPENDS src/*.hip)\nadd_library" in cmake(text, hip_extension=True).data.decode()
    mixed = cmake("project(p CUDA)\nfile(GLOB SRCS *.cu *.cpp)\n")
    assert "`file(GLOB)` collects `.cu` files with others" in mixed.manual[0][1]
    # A subdirectory file of a ported tree (no project() of its own) is not marked twice.
    sub = "file(GLOB SRCS *.cu)\nadd_library(k ${SRCS} extra.cu)\n"
    ported = cmake(sub).data.decode()
    assert cmake(ported).data.decode() == ported and ported.count("LANGUAGE HIP") == 2


def test_cmake_without_architectures_gets_the_targets_as_a_cache_default():
    out = cmake("project(p CUDA)\nenable_language(CUDA)\n").data.decode()
    assert out == 'set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx942;gfx1100" CACHE STRING "AMD GPU targets")\nproject(p HIP)\nenable_language(HIP)\n'


def test_cmake_architectures_from_a_variable_or_off_are_not_invented():
    port = cmake("project(p CUDA)\nset(CMAKE_CUDA_ARCHITECTURES ${ARCHS})\nset_target_properties(t PROPERTIES CUDA_ARCHITECTURES OFF)\n")
    text = port.data.decode()
    assert "set(CMAKE_HIP_ARCHITECTURES ${ARCHS})" in text and "HIP_ARCHITECTURES OFF" in text
    assert port.manual[0][0] == 2 and "`CMAKE_CUDA_ARCHITECTURES` is set from `${ARCHS}`" in port.manual[0][1]


def test_cmake_libraries_and_packages():
    facts = {"packages": (("", frozenset({"hip", "hipblas"})), ("tools", frozenset({"hipfft"})),
                          ("other", frozenset({"hipsparse"}))), "finds_toolkit": True}
    text = cmake("find_package(CUDAToolkit 12 REQUIRED)  # the toolkit\n"
                 "target_link_libraries(t PRIVATE CUDA::cudart_static CUDA::cublasLt CUDA::nvToolsExt culibos)\n",
                 rel="tools/CMakeLists.txt", **facts).data.decode()
    # Only the packages linked in its own directory and below; the comment stays on its line.
    assert text.startswith("find_package(hip REQUIRED)  # the toolkit\nfind_package(hipfft REQUIRED)\n")
    assert "PRIVATE hip::host roc::hipblaslt CUDA::nvToolsExt)" in text  # unknown to the table: left (BLD004)
    top = cmake("find_package(CUDA)\ntarget_link_libraries(t ${CUDA_LIBRARIES} ${CUDA_cusparse_LIBRARY} cufft)\n",
                **facts).data.decode()
    assert top == ("find_package(hip)\nfind_package(hipblas)\nfind_package(hipfft)\nfind_package(hipsparse)\n"
                   "target_link_libraries(t hip::host roc::hipsparse hipfft)\n")


def test_cmake_packages_are_found_where_no_file_found_the_toolkit():
    text = cmake("project(p CXX CUDA)\nset(CMAKE_CUDA_ARCHITECTURES 90)\nadd_library(k k.cu)\n"
                 "  target_link_libraries(k CUDA::cusolver CUDA::curand)\n").data.decode()
    assert "\n  find_package(hiprand REQUIRED)\n  find_package(hipsolver REQUIRED)\n  target_link_libraries(k roc::hipsolver hip::hiprand)" in text


def test_the_library_table_names_targets_the_rocm_packages_export():
    # Checked against the ROCm 7.2 packages (lib/cmake/<package>/<package>-targets.cmake).
    assert _port.LIBRARIES["cublas"][1:] == ("hipblas", "roc::hipblas")
    assert _port.LIBRARIES["curand"][1:] == ("hiprand", "hip::hiprand")
    assert _port.LIBRARIES["cusolver"][1:] == ("hipsolver", "roc::hipsolver")
    assert _port.LIBRARIES["cusparse"][1:] == ("hipsparse", "roc::hipsparse")
    assert _port.LIBRARIES["cufft"][1:] == ("hipfft", "hip::hipfft")
    from oracle.toolchain import ROCM72_ROOT
    cmake_dir = ROCM72_ROOT / "usr/lib/x86_64-linux-gnu/cmake"
    if not cmake_dir.is_dir():
        pytest.skip(f"{cmake_dir} missing (shared/oracle/rocm72_chroot.sh)")
    for make_name, package, target in _port.LIBRARIES.values():
        if not package:
            continue
        exported = "".join(p.read_text(errors="replace") for p in (cmake_dir / package).glob("*targets*.cmake"))
        assert f"add_library({target} " in exported or (target == "hip::host" and "add_library(hip::host" in exported), target


def test_cmake_nvcc_options():
    text = cmake('project(p CUDA)\nset(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} --use_fast_math -Xcompiler -fPIC,-Wall --fmad=false")\n'
                 "target_compile_options(t PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda> -O2\n"
                 "  $<$<COMPILE_LANGUAGE:CUDA>:-G>)\n").data.decode()
    assert 'set(CMAKE_HIP_FLAGS "${CMAKE_HIP_FLAGS} -ffast-math -fPIC -Wall -ffp-contract=off")' in text
    assert "target_compile_options(t PRIVATE -O2\n  $<$<COMPILE_LANGUAGE:HIP>:-g>)" in text


def test_cmake_architecture_options_become_one_offload_list_per_command():
    text = cmake('project(p CUDA)\nstring(APPEND CMAKE_CUDA_FLAGS " -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90")\n'
                 "target_compile_options(t PRIVATE -arch=sm_80)\n").data.decode()
    offload = "--offload-arch=gfx90a --offload-arch=gfx942 --offload-arch=gfx1100"
    assert f'string(APPEND CMAKE_HIP_FLAGS " {offload}")' in text
    assert f"target_compile_options(t PRIVATE {offload})" in text


def test_cmake_what_is_not_ported_is_listed():
    port = cmake("project(p CUDA)\n"
                 "target_compile_options(t PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-rdc=true> $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-a,-b>)\n"
                 "add_custom_command(OUTPUT k.fatbin COMMAND ${CMAKE_CUDA_COMPILER} -fatbin k.cu)\n"
                 "find_package(CUDNN REQUIRED)\n"
                 "cuda_add_library(k k.cu OPTIONS -G)\n"
                 "set(CMAKE_CUDA_HOST_COMPILER g++)\n")
    notes = "\n".join(f"{line}: {text}" for line, text in port.manual)
    assert "3: nvcc option `-rdc=true`" in notes
    assert "3: nvcc option `-Xcompiler=-a,-b` inside a generator expression" in notes
    assert "4: `add_custom_command` runs nvcc" in notes
    assert "5: `find_package(CUDNN)`: a CUDA library outside the toolkit; on ROCm use MIOpen" in notes
    assert "6: `cuda_add_library(... OPTIONS ...)`" in notes
    assert "8: `CMAKE_CUDA_HOST_COMPILER`: drop it" in notes  # line 7: LANGUAGE HIP for k.cu
    assert "-rdc=true" in port.data.decode()  # left as it was


def test_cmake_find_modules_of_nvidia_components_are_listed():
    port = cmake("find_library(NVSCIBUF_LIBRARY NAMES nvscibuf)\n", rel="cmake/Modules/FindNVSCI.cmake")
    assert port.manual == [(1, port.manual[0][1])] and "a find module for an NVIDIA component" in port.manual[0][1]
    assert not cmake("find_library(FI_LIBRARY NAMES freeimage)\n", rel="cmake/FindFreeImage.cmake").manual


def test_cmake_code_that_handles_amd_is_left_alone():
    dual = "project(p CXX)\nif(USE_HIP)\n  enable_language(HIP)\nelse()\n  enable_language(CUDA)\nendif()\n"
    assert not cmake(dual).changed
    branch = ('if(GPU_RUNTIME STREQUAL "CUDA")\n  find_package(CUDAToolkit REQUIRED)\nendif()\n'
              "target_link_libraries(t CUDA::cublas)\n")
    text = cmake(branch).data.decode()
    assert "find_package(CUDAToolkit REQUIRED)" in text and "roc::hipblas" in text


def test_cmake_port_with_a_new_parse_error_is_refused(tmp_path, monkeypatch):
    monkeypatch.setitem(_port.CMAKE_NAMES, "CMAKE_CUDA_STANDARD", 'CMAKE_HIP_STANDARD "(')
    src = tmp_path / "src"
    src.mkdir()
    original = "project(p CXX CUDA)\nset(CMAKE_CUDA_STANDARD 17)\nadd_executable(p main.cu)\n"
    (src / "CMakeLists.txt").write_text(original)
    (src / "main.cu").write_text("__global__ void k() {}\n")
    result = migrate(src, tmp_path / "out")
    assert (tmp_path / "out/CMakeLists.txt").read_text() == original
    assert any("build file not ported: the ported file does not parse as CMake; copied as it was" in n
               for n in result.notes)
    assert "- [ ] `CMakeLists.txt`: copied unchanged\n  - [ ] not ported: the ported file does not parse as CMake" \
        in (tmp_path / "out" / CHECKLIST_NAME).read_text()


def test_build_files_that_are_not_ported_are_listed_with_what_to_do(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    setup = ("from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
             "setup(name='ops', ext_modules=[CUDAExtension('ops', ['ops.cu'])], cmdclass={'build_ext': BuildExtension})\n")
    (src / "setup.py").write_text(setup)
    (src / "meson.build").write_text("project('p', 'cpp')\nnvcc = find_program('nvcc')\n")
    (src / "BUILD").write_text("cc_library(name = 'plain', srcs = ['a.cc'])\n")
    migrate(src, tmp_path / "out")
    assert (tmp_path / "out/setup.py").read_text() == setup
    checklist = (tmp_path / "out" / CHECKLIST_NAME).read_text()
    assert "- [ ] `setup.py`: copied unchanged\n  - [ ] line 2: PyTorch `CUDAExtension`" in checklist
    assert "- [ ] `meson.build`: copied unchanged\n  - [ ] line 2: runs nvcc" in checklist
    assert "- [ ] `BUILD`: copied unchanged (nothing to port" in checklist


# Makefiles ---------------------------------------------------------------------------------------

def test_makefile_compiler_options_libraries_and_paths():
    text = make("CUDA_HOME ?= /usr/local/cuda-12.4\nNVCC := $(CUDA_HOME)/bin/nvcc\n"
                "FLAGS := -arch=sm_80 -O3 --default-stream per-thread -Xptxas -v -ccbin g++ --ftz=true\n"
                "LIBS := -L$(CUDA_HOME)/lib64 -lcudart -lcusparse -lculibos -lm\n"
                "app: app.cu\n\tnvcc -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 $< -o $@\n").data.decode()
    assert text == ("ROCM_PATH ?= /opt/rocm\nNVCC := $(ROCM_PATH)/bin/hipcc\n"
                    "FLAGS := --offload-arch=gfx90a --offload-arch=gfx942 --offload-arch=gfx1100 -O3 "
                    "-fgpu-default-stream=per-thread -fgpu-flush-denormals-to-zero\n"
                    "LIBS := -L$(ROCM_PATH)/lib -lamdhip64 -lhipsparse -lm\n"
                    "app: app.cu\n\thipcc --offload-arch=gfx90a --offload-arch=gfx942 --offload-arch=gfx1100 $< -o $@\n")


def test_makefile_what_is_not_ported_is_listed():
    port = make("NVCC = nvcc\nFLAGS = -O2 -maxrregcount=32\nbench: b.cu\n\t$(NVCC) -rdc=true $< -lcudadevrt\n")
    notes = "\n".join(f"{line}: {text}" for line, text in port.manual)
    assert "2: nvcc option `-maxrregcount=32`" in notes and "4: nvcc option `-rdc=true`" in notes
    assert "-lcudadevrt" in port.data.decode()  # left for hand work (BLD004 reports it)


def test_makefile_that_names_a_hip_compiler_is_left_alone():
    text = "HIPCC ?= hipcc\nNVCC ?= nvcc\nifeq ($(GPU),cuda)\nCXX := $(NVCC)\nendif\n"
    assert not make(text).changed


def test_makefile_port_that_changes_the_lines_is_refused(monkeypatch):
    monkeypatch.setattr(_port, "HIP_COMPILER", "hipcc\nX = 1")
    port = make("NVCC := nvcc\nall:\n\t$(NVCC) a.cu\n")
    assert port.refused and port.data == b"NVCC := nvcc\nall:\n\t$(NVCC) a.cu\n"


def test_makefile_recipe_tab_and_comments_stay():
    text = make("all: a.cu  # built with nvcc -arch=sm_80\n\t@nvcc --expt-relaxed-constexpr -o a a.cu\n").data.decode()
    assert text == "all: a.cu  # built with nvcc -arch=sm_80\n\t@hipcc -o a a.cu\n"


# Oracle: configure and build the ported projects with ROCm 7.2 -------------------------------------

def _rocm72_or_skip():
    from oracle.toolchain import ROCM72_ROOT, rocm72_full_missing
    why = rocm72_full_missing()
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the ROCm 7.2 chroot is missing: {why}")
        pytest.skip(why)
    try:
        import cmake as cmake_wheel
    except ImportError:
        cmake_wheel = None
    ninja, make_program = shutil.which("ninja"), shutil.which("make")
    if cmake_wheel is None or ninja is None or make_program is None:
        why = "the cmake and ninja packages from PyPI (the test extra) and make are needed"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {why}")
        pytest.skip(why)
    # The chroot has no CMake, Ninja or make of its own: copy this machine's in (they need only glibc and libstdc++).
    tools = ROCM72_ROOT / "src" / "hiplint-buildtools"
    if not (tools / "bin" / "cmake").exists():
        shutil.copytree(Path(cmake_wheel.CMAKE_BIN_DIR).parent, tools, dirs_exist_ok=True)
        shutil.copy(ninja, tools / "bin" / "ninja")
        shutil.copy(make_program, tools / "bin" / "make")
    return ROCM72_ROOT, "/src/hiplint-buildtools/bin"


ROCM72_ENV = ["/usr/bin/env", "HIP_PATH=/usr", "HIP_CLANG_PATH=/usr/lib/llvm-22/bin",
              "HIP_DEVICE_LIB_PATH=/usr/lib/llvm-22/lib/clang/22/amdgcn/bitcode"]


def _chroot(root, *cmd, timeout=600):
    return subprocess.run(["chroot", str(root), *ROCM72_ENV, *cmd], capture_output=True, text=True, timeout=timeout)


def _configure(root, tools, project_dir):
    inside = "/" + str(project_dir.relative_to(root))
    return _chroot(root, f"{tools}/cmake", "-S", inside, "-B", f"{inside}/build", "-G", "Ninja",
                   f"-DCMAKE_MAKE_PROGRAM={tools}/ninja", "-DCMAKE_HIP_COMPILER=/usr/lib/llvm-22/bin/clang++",
                   "-DCMAKE_CXX_COMPILER=/usr/lib/llvm-22/bin/clang++")


@pytest.mark.oracle
@pytest.mark.parametrize("mode", ["default", "hip-extension"])
def test_ported_cmake_project_configures_and_builds_with_rocm72(mode):
    root, tools = _rocm72_or_skip()
    import tempfile
    with tempfile.TemporaryDirectory(prefix="buildport-", dir=root / "src") as tmp:
        out = Path(tmp) / "cmake_app"
        migrate(PROJECTS / "cmake_app", out, targets=["gfx942"], hip_extension=mode == "hip-extension")
        done = _configure(root, tools, out)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        built = _chroot(root, f"{tools}/ninja", "-C", "/" + str((out / "build").relative_to(root)))
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
        assert "Linking HIP executable heat" in built.stdout
        assert "--offload-arch=gfx942" in (out / "build" / "build.ninja").read_text()


@pytest.mark.oracle
def test_unported_cmake_project_does_not_configure_with_rocm72():
    # The check can fail: the CUDA project as it is finds no CUDA compiler on a ROCm machine.
    root, tools = _rocm72_or_skip()
    import tempfile
    with tempfile.TemporaryDirectory(prefix="buildport-", dir=root / "src") as tmp:
        out = Path(tmp) / "cmake_app"
        shutil.copytree(PROJECTS / "cmake_app", out)
        done = _configure(root, tools, out)
        assert done.returncode != 0 and "CUDA" in done.stdout + done.stderr


@pytest.mark.oracle
def test_ported_makefile_builds_with_rocm72_hipcc():
    root, tools = _rocm72_or_skip()
    import tempfile
    with tempfile.TemporaryDirectory(prefix="buildport-", dir=root / "src") as tmp:
        out = Path(tmp) / "make_app"
        migrate(PROJECTS / "make_app", out, targets=["gfx942"], hip_extension=True)
        # ROCm lives in /usr in the chroot (Debian's packages), not in the default /opt/rocm.
        built = _chroot(root, f"{tools}/make", "-C", "/" + str(out.relative_to(root)), "ROCM_PATH=/usr")
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
        assert "/usr/bin/hipcc --offload-arch=gfx942" in built.stdout
