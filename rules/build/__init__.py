"""BLD: build files (CMake, Makefiles) and nvcc command lines."""
