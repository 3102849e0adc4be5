"""MEM: memory and number types (LDS size, cache config, textures, managed memory, fine-grained
atomics, pointer attributes, symbols, fp8/bf16/half types)."""
