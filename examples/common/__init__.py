"""Helpers the Python example programs share (the training loop, an SVG chart); not part of wick."""
