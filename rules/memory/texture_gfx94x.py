import re

from hiplint import CudaRule, Impact, Severity
from hiplint.preproc import excluded_when

from ._values import table
from hiplint.lazy import lazy_re

# CUDA's texture and surface functions (CUDA programming guide, "Texture Functions" and "Surface
# Functions"); exact names, so user helpers such as `tex2DBicubic` are not mistaken for them.
SAMPLING = lazy_re(r"^(tex1Dfetch|tex(1D|2D|3D|1DLayered|2DLayered|Cubemap|CubemapLayered)(Lod|Grad)?|"
                      r"tex2Dgather|tex2D_sparse|tex2DLod_sparse|tex2DGrad_sparse|tex3D_sparse|tex3DLod_sparse|tex3DGrad_sparse|"
                      r"surf(1D|2D|3D|1DLayered|2DLayered|Cubemap|CubemapLayered)(read|write))$")
GUARD_MACRO = "__HIP_NO_IMAGE_SUPPORT"


def _image_less(settings) -> list[str]:
    unsupported = set(table()["images"]["unsupported"])
    return [a for a in settings.targets if a in unsupported]


class TextureOnGfx94x(CudaRule):
    """Texture or surface sampling in device code built for gfx940-gfx942 (MI300), which has no image hardware.

    ## What it does
    When the configured targets include gfx940, gfx941 or gfx942, finds device calls of the texture
    and surface functions: `tex1D`, `tex1Dfetch`, `tex2D`, `tex3D`, `tex2DLayered`, `tex2Dgather`,
    `tex*Lod`, `tex*Grad`, `texCubemap*`, `surf1Dread`, `surf2Dwrite`, `surf3D*`, ... Calls inside an
    `#if` on `__HIP_NO_IMAGE_SUPPORT` are left alone, and so are calls that a target's device pass
    skips (`#if !defined(__gfx942__)`, the `#else` of `#if defined(__gfx940__) || defined(__gfx942__)`).
    Each texture (or surface) is reported once per function, at its first call; the function's other
    calls on it are listed with it as related locations.

    ## Why it breaks on AMD
    MI300 (gfx940/gfx941/gfx942) has no image instructions. The compiler defines
    `__HIP_NO_IMAGE_SUPPORT` to 1 for these targets and HIP declares the texture and surface
    functions unavailable there ("The image/texture API not supported on the device"), so a kernel
    that samples a texture does not compile for gfx942, even if it is only meant for other GPUs in a
    fat binary. `hipDeviceAttributeImageSupport` is 0 on these devices. Other targets (gfx90a, gfx1100)
    support textures. Every ROCm version.

    ## Example
    ```cuda
    __global__ void k(cudaTextureObject_t t, float* out) {
        out[threadIdx.x] = tex1Dfetch<float>(t, threadIdx.x);
    }
    ```

    ## Use instead
    ```cuda
    __global__ void k(const float* __restrict__ in, float* out) {
        out[threadIdx.x] = __ldg(&in[threadIdx.x]);
    }
    ```
    Or keep the texture path for other targets behind `#if !defined(__HIP_NO_IMAGE_SUPPORT) || !__HIP_NO_IMAGE_SUPPORT`
    with a global-memory fallback, and check `hipDeviceAttributeImageSupport` on the host.

    ## References
    - HIP C++ language extensions, texture functions ("use `__HIP_NO_IMAGE_SUPPORT`", `hipDeviceAttributeImageSupport`): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html
    - HIP headers: `hip/amd_detail/texture_fetch_functions.h`, `host_defines.h` (unavailable attribute when images are not supported): https://github.com/ROCm/clr
    - AMD GPU specifications (MI300 series): https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html
    """

    code = "MEM004"
    name = "texture-on-gfx94x"
    summary = "texture/surface sampling does not compile for gfx940-gfx942 (no image support)"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    checklist = "Give texture/surface kernels a global-memory path for gfx942 (guard with __HIP_NO_IMAGE_SUPPORT, check hipDeviceAttributeImageSupport)."
    query = """
    ((call_expression function: [(identifier) @fn (template_function name: (identifier) @fn)]) @call
     (#match? @fn "^(tex|surf)"))
    """

    def enabled_for(self, settings) -> bool:
        return super().enabled_for(settings) and bool(_image_less(settings))

    def check(self, ctx, captures):
        fn = ctx.text(captures["fn"][0])
        if not SAMPLING.match(fn):
            return
        call = captures["call"][0]
        if _guarded(ctx, call):
            return
        skipped = _excluded_targets(ctx, call, _image_less(ctx.settings))
        archs = [a for a in _image_less(ctx.settings) if a not in skipped]
        if not archs:
            return
        targets = ", ".join(archs)
        # One finding per texture (or surface) per function: a bilinear filter samples one texture four
        # times on a line. The later calls are related locations of the first.
        texture = _texture_argument(ctx, call, fn)
        key = ("mem004", id(ctx.unit), ctx.function_scope(call).start_byte, texture, tuple(archs))
        first = ctx.cache.get(key)
        if first is not None:
            what = f"`{texture}`" if texture else "it"
            ctx.relate(first, call, f"`{fn}` samples {what} here too")
            return
        verb = "has" if len(archs) == 1 else "have"
        ctx.cache[key] = ctx.report(call, f"`{fn}`: {targets} {verb} no image hardware (__HIP_NO_IMAGE_SUPPORT); "
                                          f"texture and surface functions are unavailable there and the kernel does not "
                                          f"compile")


def _texture_argument(ctx, call, fn: str) -> str:
    """The texture or surface a call reads or writes (`surf2Dwrite(value, surf, ...)`: the second argument)."""
    args = call.child_by_field_name("arguments")
    if args is None:
        return ""
    index = 1 if fn.startswith("surf") and fn.endswith("write") else 0
    return " ".join(ctx.text(args.named_children[index]).split()) if args.named_child_count > index else ""


# Defined in every device pass of an AMD build; an AMD build never defines __CUDA_ARCH__.
_AMD_DEVICE_PASS = {"__HIP_PLATFORM_AMD__": True, "__HIP_PLATFORM_HCC__": True, "__HIPCC__": True, "__HIP__": True,
                    "__HIP_DEVICE_COMPILE__": True, "__AMDGCN__": True, "__AMDGPU__": True, "__CUDA_ARCH__": False,
                    GUARD_MACRO: True}
_ARCH = lazy_re(r"__gfx([0-9a-f]+)__")
_FAMILY = lazy_re(r"__GFX(\d+)__")


def _device_pass_macros(target: str):
    """Which macros clang defines when it compiles device code for `target` (gfx942): the target's
    own `__gfx942__` and family `__GFX9__`, no other target's; None for anything else."""
    digits = target[3:]
    family = digits[:2] if len(digits) == 4 else digits[:1]

    def known(name: str):
        if name in _AMD_DEVICE_PASS:
            return _AMD_DEVICE_PASS[name]
        m = _ARCH.fullmatch(name)
        if m:
            return m.group(1) == digits
        m = _FAMILY.fullmatch(name)
        if m:
            return m.group(1) == family
        return None
    return known


def _excluded_targets(ctx, call, archs: list[str]) -> list[str]:
    """The targets whose device pass skips `call` (`#if !defined(__gfx942__)`, the `#else` of a gfx94x test)."""
    if ctx.unit.is_macro:
        return []
    offset = ctx.file_range(call)[0]
    return [a for a in archs if excluded_when(offset, ctx.source.data, _device_pass_macros(a))]


def _guarded(ctx, node) -> bool:
    n = node.parent
    while n is not None:
        if n.type in ("preproc_if", "preproc_ifdef", "preproc_elif", "preproc_else"):
            cond = n.child_by_field_name("condition") or n.child_by_field_name("name")
            head = n if cond is None else cond
            if GUARD_MACRO in ctx.text(head):
                return True
            if n.type == "preproc_else" and n.parent is not None and GUARD_MACRO in ctx.text(n.parent).split("\n", 1)[0]:
                return True
        n = n.parent
    return False
