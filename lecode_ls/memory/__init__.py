"""The memory core: pure Python, no pygls or lsprotocol imports."""
