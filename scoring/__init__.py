"""Scoring: compare predictions with gold, field by field, without calling any model."""
