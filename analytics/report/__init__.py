"""The report: its numbers, its sections as blocks, its figures, and the renderers that
write the same blocks for a terminal, Markdown, HTML and JSON."""
