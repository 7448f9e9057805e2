"""The tools the memory offers through three doors (the model's tool calls in a chat turn, the
`/memory` line, and MCP): the memory tools under the readonly flag (memory.py), the workspace
`read` tool (read.py), the permission policy they answer to (permissions.py), and the `/memory`
command line (slash.py).
"""
