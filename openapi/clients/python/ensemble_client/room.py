"""Placeholder: the room stream (hand-written)."""
