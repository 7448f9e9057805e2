"""`lecode-ls mcp`: the project memory served to other agents over the Model Context Protocol."""
