from hiplint import Impact, Severity

from ._whole import WholeLibraryRule


class TensorrtToMigraphx(WholeLibraryRule):
    """TensorRT is used: AMD's inference compiler is MIGraphX, a different API.

    ## What it does
    Reports the first TensorRT include (`NvInfer.h`, `NvInferPlugin.h`, `NvOnnxParser.h`, ...) of a
    file, or in a file without one the first `nvinfer1::` / `nvonnxparser::` name. Once per file, and once per
    directory in what is reported (its other files are related locations).

    ## Why it breaks on AMD
    TensorRT exists only for NVIDIA GPUs and hipify has no mapping for it. On ROCm the inference
    graph compiler is MIGraphX (`migraphx/migraphx.hpp`, or ONNX Runtime with the MIGraphX execution
    provider). Engines, builder configs and plugins (`IPluginV2`, custom CUDA kernels) must be
    redone: MIGraphX parses ONNX and compiles for the target itself. All targets.

    ## Example
    ```cuda
    #include <NvInfer.h>
    nvinfer1::IBuilder* make(nvinfer1::ILogger& log) { return nvinfer1::createInferBuilder(log); }
    ```

    ## Use instead
    ```cuda
    #include <migraphx/migraphx.hpp>
    migraphx::program load() { return migraphx::parse_onnx("model.onnx"); }
    ```

    ## References
    - MIGraphX documentation: https://rocm.docs.amd.com/projects/AMDMIGraphX/en/latest/
    - ONNX Runtime MIGraphX execution provider: https://onnxruntime.ai/docs/execution-providers/MIGraphX-ExecutionProvider.html
    - HIP porting guide, library equivalents: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    """

    code = "LIB009"
    name = "tensorrt-to-migraphx"
    summary = "TensorRT has no AMD port: use MIGraphX"
    severity = Severity.WARNING
    impact = Impact.COMPILE
    library = "tensorrt"
    checklist = "Replace the TensorRT engine build/run path with MIGraphX (or ONNX Runtime + MIGraphX EP); re-implement TensorRT plugins as MIGraphX custom ops."
