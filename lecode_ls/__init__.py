"""lecode-ls: lecode's persistent project memory, served over the Language Server Protocol."""

__version__ = "0.1.0"
