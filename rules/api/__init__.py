"""API: CUDA APIs without a HIP equivalent (the `unsupported` entries of the rename table, rules/rename/)."""
