"""Test doubles at the two seams STYLE 8 allows: the scripted provider and this HTTP server."""
