"""The local store's devkit: what testing it on one machine needs (not in the core wheel)."""
