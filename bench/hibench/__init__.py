"""The bench/run driver (see bench/README.md)."""
