"""Corpus runs (filled in below)."""
