"""WRP: code that assumes a 32-lane warp. AMD CDNA GPUs (gfx90a, gfx942, gfx950) run 64-lane waves."""
