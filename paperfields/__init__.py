"""PaperFields: a benchmark for LLM structured extraction from ML paper abstracts."""

__version__ = "0.1.0"
