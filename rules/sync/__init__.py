"""SYN: synchronization and scheduling that CUDA allows and AMD does not: spin locks inside a warp,
barriers in branches uniform per 32 threads, named barriers, dynamic parallelism, grid sync,
cooperative-group features and CUDA graph and launch attributes HIP lacks."""
