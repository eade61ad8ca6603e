"""The command layer: slash commands declared once, typed results, no UI imports."""
