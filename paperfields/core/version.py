"""The package version (kept apart so the floor can record it without importing ``paperfields``'s API)."""

__version__ = "0.1.0"
